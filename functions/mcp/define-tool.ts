import { validate } from '#domain/validation.ts';
import { isRefused } from '#domain/outcome.ts';
import { IDEMPOTENCY_ARG, idempotencyKeyArg, rest } from './args.ts';
import { DRY_RUN_ARG, dryRunArg, isWrite } from './dry-run.ts';
import type { ToolDefinition, ToolSpec } from './tool-spec.ts';
import type { ToolSchemas } from './tool-schemas.ts';
import type { ToolOperation } from './operations.ts';

/**
 * A tool from its spec (tools.ts, event-tools.ts): the arguments validated with the spec's
 * schemas, then the endpoint's request built from them; `idempotency_key` and, on writes,
 * `dry_run` taken off first.
 */
export function define(operation: ToolOperation, { request, ...spec }: ToolSpec): ToolDefinition {
  const write = isWrite(operation);
  // The JSON Schemas serve tools/list only: converted on first use, so a cold container that
  // answers a tool call (most invocations) never pays for converting every tool's schemas, and
  // loaded with the first tools/list, so no container's import builds what converts them
  // (tool-schemas.ts).
  let schemas: Promise<ToolSchemas> | undefined;
  return {
    ...spec,
    operation,
    schemas: () => (schemas ??= import('./tool-schemas.ts').then((m) => m.toolSchemas(spec, write))),
    toRequest: (args) => {
      // The key first: without it nothing may run, whatever else is wrong.
      const idempotencyKey = spec.idempotent ? idempotencyKeyArg(args) : undefined;
      if (isRefused(idempotencyKey)) return idempotencyKey;
      const dryRun = write && dryRunArg(args);
      if (isRefused(dryRun)) return dryRun;
      const others = rest(args, [...(spec.idempotent ? [IDEMPOTENCY_ARG] : []), ...(write ? [DRY_RUN_ARG] : [])]);
      const checked = validate(spec.args, others);
      if (isRefused(checked)) return checked;
      return {
        ...request(others),
        ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
        ...(dryRun ? { dryRun } : {}),
      };
    },
  };
}
