import * as v from 'valibot';
import { validationFailed } from '#domain/errors.ts';
import { API_ROUTES } from '#http/api-routes.ts';
import type { ToolOperation } from './operations.ts';
import { canDryRun, DRY_RUN_PARAM } from '#http/dry-run.ts';
import type { ResponseBody } from '#http/openapi/resources.ts';
import type { Args } from './args.ts';
import { resultSchema } from './output-schema.ts';

/**
 * The `dry_run` argument of the write tools (docs/mcp.md#dry-runs): the same plan the HTTP
 * writes answer to `?dry_run=true`.
 */
export const DRY_RUN_ARG = DRY_RUN_PARAM;

export const isWrite = (operation: ToolOperation) =>
  API_ROUTES.find((r) => r.operation === operation)?.method !== 'GET' && canDryRun(operation);

export const DRY_RUN_SCHEMA = {
  type: 'boolean',
  description:
    'true: validate and answer what the call would do (result would_create, would_update with changed_fields, or unchanged; or the error the call would give) without writing anything or raising an event.',
};

/** `dry_run` from the arguments (false when absent), or 422 naming it. */
export function dryRunArg(args: Args): boolean {
  const value = args[DRY_RUN_ARG];
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw validationFailed(DRY_RUN_ARG, `${DRY_RUN_ARG} must be a boolean.`);
  return value;
}

const d = <S extends v.GenericSchema>(schema: S, description: string) => v.pipe(schema, v.description(description));
const result = d(
  v.picklist(['would_create', 'would_update', 'unchanged']),
  'What the write would do; nothing was written.',
);
const changed = d(v.array(v.string()), 'For would_update: the fields of data that would change.');
const wouldBe = d(
  v.record(v.string(), v.unknown()),
  'The record as the write would leave it; ids a create would assign are null.',
);

/** The structuredContent of a dry run, beside the tool's document and its error. */
export function dryRunSchema(output: ResponseBody): v.GenericSchema {
  if (output === 'BatchResult') {
    const item = v.looseObject({
      external_id: v.string(),
      status: v.number(),
      result: v.optional(result),
      changed_fields: v.optional(changed),
      data: v.nullable(wouldBe),
    });
    return resultSchema(output, { dry_run: v.literal(true), data: v.array(item) });
  }
  return resultSchema(output, { dry_run: v.literal(true), result, changed_fields: changed, data: wouldBe });
}
