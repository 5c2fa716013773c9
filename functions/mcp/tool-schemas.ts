import type * as v from 'valibot';
import type { ResponseBody } from '#http/openapi/resources.ts';
import { DRY_RUN_BODIES } from '#http/openapi/dry-run.ts';
import { inputSchemaOf, type JsonSchemaObject } from './input-schema.ts';
import { outputSchemaOf, resultSchema } from './output-schema.ts';
import { DRY_RUN_ARG, DRY_RUN_SCHEMA } from './dry-run.ts';
import type { ToolSpec } from './tool-spec.ts';

/**
 * What tools/list shows of a tool beside its name and text: its JSON Schemas, converted from the
 * valibot schemas its arguments are validated with and from the response shapes the OpenAPI
 * document is generated from (shared/http/openapi/resources.ts).
 *
 * define-tool.ts loads this module with a dynamic import at the first tools/list of a container,
 * so a container's import builds none of it: not the response shapes, not the converter
 * (@valibot/to-json-schema). A tool call, initialize and ping never need it.
 */
export interface ToolSchemas {
  inputSchema: JsonSchemaObject;
  outputSchema: ReturnType<typeof outputSchemaOf>;
}

/** The structuredContent of a dry run, beside the tool's document and its error. */
function dryRunSchema(output: ResponseBody): v.GenericSchema {
  const plan = output === 'BatchResult' ? DRY_RUN_BODIES.BatchDryRunPlan : DRY_RUN_BODIES.DryRunPlan;
  return resultSchema(output, plan.entries);
}

/** A tool's input and output JSON Schemas; a write's input takes `dry_run`, and its output may be the dry run's plan. */
export function toolSchemas(spec: Omit<ToolSpec, 'request'>, write: boolean): ToolSchemas {
  const input = inputSchemaOf(spec.shown ?? spec.args, { idempotent: spec.idempotent === true });
  if (write) input.properties = { ...input.properties, [DRY_RUN_ARG]: DRY_RUN_SCHEMA };
  return {
    inputSchema: input,
    outputSchema: outputSchemaOf(spec.output, write ? [dryRunSchema(spec.output)] : []),
  };
}
