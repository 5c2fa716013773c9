/** What the OpenAPI document says about dry runs (docs/api.md#dry-runs): the parameter and the two answers. */
import * as v from 'valibot';
import { described as d } from '#domain/validation.ts';
import { ErrorBody } from './resources.ts';
import { canDryRun, DRY_RUN_PARAM } from '../dry-run.ts';

export const DryRunOutcome = d(
  v.picklist(['would_create', 'would_update', 'unchanged']),
  'What the write would do. Nothing was written.',
);
const changed = d(v.array(v.string()), 'For would_update: the top-level fields of data that would change.');
const wouldBe = d(
  v.record(v.string(), v.unknown()),
  'The record as the write would leave it, in the shape the write answers; an id a create would assign may be null.',
);

export const DRY_RUN_BODIES = {
  DryRunPlan: v.strictObject({
    dry_run: v.literal(true),
    result: DryRunOutcome,
    changed_fields: changed,
    data: wouldBe,
  }),
  BatchDryRunPlan: v.strictObject({
    dry_run: v.literal(true),
    data: v.array(
      v.strictObject({
        external_id: v.nullable(v.string()),
        status: v.pipe(v.number(), v.integer()),
        result: v.nullable(
          d(
            v.picklist(['would_create', 'would_update', 'unchanged']),
            'What the write of this item would do; null for an item in error, as in the real batch.',
          ),
        ),
        changed_fields: v.optional(changed),
        data: v.nullable(wouldBe),
        error: v.nullable(ErrorBody),
      }),
    ),
  }),
};

export const dryRunParameter = {
  name: DRY_RUN_PARAM,
  in: 'query',
  required: false,
  description:
    'true: validate and answer what the write would do (DryRunPlan: would_create, would_update with changed_fields, or unchanged; or exactly the error the write would give) without writing anything, raising an event or using the Idempotency-Key (docs/api.md#dry-runs).',
  schema: { type: 'string', enum: ['true', 'false'] },
};

/** The 200 schema of a write: its document, or the plan of a dry run. */
export function withDryRun(operation: string, schema: object): object {
  if (!canDryRun(operation)) return schema;
  const plan = operation === 'upsertProducts' ? 'BatchDryRunPlan' : 'DryRunPlan';
  return { anyOf: [schema, { $ref: `#/components/schemas/${plan}` }] };
}
