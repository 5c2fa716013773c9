import { refused, type Refused } from '#domain/outcome.ts';
import type { ToolOperation } from './operations.ts';
import { canDryRun, DRY_RUN_PARAM } from '#http/dry-run.ts';
import type { Args } from './args.ts';

/**
 * The `dry_run` argument of the write tools (docs/mcp.md#dry-runs): the same plan the HTTP
 * writes answer to `?dry_run=true`.
 */
export const DRY_RUN_ARG = DRY_RUN_PARAM;

export const isWrite = (operation: ToolOperation) => canDryRun(operation);

export const DRY_RUN_SCHEMA = {
  type: 'boolean',
  description:
    'true: validate and answer what the call would do (result would_create, would_update with changed_fields, or unchanged; or the error the call would give) without writing anything or raising an event.',
};

/** `dry_run` from the arguments (false when absent), or 422 naming it. */
export function dryRunArg(args: Args): boolean | Refused {
  const value = args[DRY_RUN_ARG];
  if (value === undefined) return false;
  if (typeof value !== 'boolean') return refused('validation_failed', `${DRY_RUN_ARG} must be a boolean.`, DRY_RUN_ARG);
  return value;
}
