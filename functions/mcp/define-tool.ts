import { parse } from '#domain/validation.ts';
import { IDEMPOTENCY_ARG, idempotencyKeyArg, rest } from './args.ts';
import { inputSchemaOf } from './input-schema.ts';
import { outputSchemaOf } from './output-schema.ts';
import { DRY_RUN_ARG, DRY_RUN_SCHEMA, dryRunArg, dryRunSchema, isWrite } from './dry-run.ts';
import type { ToolDefinition, ToolSpec } from './tool-spec.ts';
import type { ToolOperation } from './operations.ts';

/**
 * A tool from its spec (tools.ts, event-tools.ts): the arguments validated with the spec's
 * schemas, then the endpoint's request built from them; `idempotency_key` and, on writes,
 * `dry_run` taken off first.
 */
export function define(operation: ToolOperation, { request, ...spec }: ToolSpec): ToolDefinition {
  const write = isWrite(operation);
  // The JSON Schemas serve tools/list only: converted on first use, so a cold container that
  // answers a tool call (most invocations) never pays for converting every tool's schemas.
  let schemas: Pick<ToolDefinition, 'inputSchema' | 'outputSchema'> | undefined;
  const converted = () => {
    if (schemas) return schemas;
    const input = inputSchemaOf(spec.shown ?? spec.args, { idempotent: spec.idempotent === true });
    if (write) input.properties = { ...input.properties, [DRY_RUN_ARG]: DRY_RUN_SCHEMA };
    schemas = {
      inputSchema: input,
      outputSchema: outputSchemaOf(spec.output, write ? [dryRunSchema(spec.output)] : []),
    };
    return schemas;
  };
  return {
    ...spec,
    operation,
    get inputSchema() {
      return converted().inputSchema;
    },
    get outputSchema() {
      return converted().outputSchema;
    },
    toRequest: (args) => {
      // The key first: without it nothing may run, whatever else is wrong.
      const idempotencyKey = spec.idempotent ? idempotencyKeyArg(args) : undefined;
      const dryRun = write ? dryRunArg(args) : false;
      const others = rest(args, [...(spec.idempotent ? [IDEMPOTENCY_ARG] : []), ...(write ? [DRY_RUN_ARG] : [])]);
      parse(spec.args, others);
      return {
        ...request(others),
        ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
        ...(dryRun ? { dryRun } : {}),
      };
    },
  };
}
