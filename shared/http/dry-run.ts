import type { RequestContext } from '#shared/context.ts';
import { refused, type Refused } from '#domain/outcome.ts';
import { externalIdFromPath } from '#domain/validation.ts';
import { API_ROUTES, isWriteRoute, type Group, type KeyedOperation, type WriteOperationOf } from './api-routes.ts';
import type { RouteFn, RouteInput } from './http-handler.ts';
import type { RouteResult } from './response.ts';

/**
 * Dry runs of the writes (docs/api.md#dry-runs): `?dry_run=true` on HTTP, `dry_run: true` on the
 * MCP write tools. The write runs its own code path (validation, reads, decisions, the
 * idempotency check) with every DynamoDB write held back, so an error is exactly the one the real
 * write would answer, and a success is compared with the current state to say what would happen.
 * Nothing is written: no event, no idempotency record, nothing of the key's write budget.
 */
export const DRY_RUN_PARAM = 'dry_run';

export type DryRunResult = 'would_create' | 'would_update' | 'unchanged';

/** Fields that move on every change and say nothing about what the change is (`checksum` digests the others). */
const BOOKKEEPING = new Set(['updated_at', 'created_at', 'checksum']);

type Data = Record<string, unknown>;

/**
 * The current state of what a write addresses, in the shape of its answer's `data`; undefined when
 * it does not exist yet.
 */
export type CurrentState = (ctx: RequestContext, input: RouteInput) => Promise<Data | undefined>;

/**
 * Each write operation's reader, given by the group that owns the operation (its handler.ts), so
 * a group's bundle holds only its own entities. The batch reads each item's product with
 * `upsertProduct`'s reader, the item's external id in place of the path's.
 */
export type CurrentStates = Partial<Record<KeyedOperation, CurrentState>>;

/** A group's readers: one for each of its writes, the batch excepted (a missing one does not compile). */
export type CurrentStatesOf<G extends Group> = Record<Exclude<WriteOperationOf<G>, 'upsertProducts'>, CurrentState>;

/** The external id a write's path addresses (as the route itself reads it). */
export const pathExternalId = (input: RouteInput) =>
  externalIdFromPath(input.pathParameters.external_id) ?? input.pathParameters.external_id ?? '';

/** Every write of the route table. */
const WRITES: ReadonlySet<string> = new Set(API_ROUTES.filter(isWriteRoute).map((r) => r.operation));

export const canDryRun = (operation: string): boolean => WRITES.has(operation);

/**
 * Reads and removes `dry_run` from a write's query: `true` or `false`, anything else is 422 (the
 * route would refuse an unknown parameter anyway, and a typo must not turn into a real write).
 */
export function takeDryRun(
  operation: string,
  query: Record<string, string>,
): { dryRun: boolean; query: Record<string, string> } | Refused {
  if (!canDryRun(operation) || !Object.hasOwn(query, DRY_RUN_PARAM)) return { dryRun: false, query };
  const { [DRY_RUN_PARAM]: value, ...rest } = query;
  if (value !== 'true' && value !== 'false')
    return refused('validation_failed', 'dry_run must be true or false.', DRY_RUN_PARAM);
  return { dryRun: value === 'true', query: rest };
}

/** What the write would do: its answer as a dry run (`ctx.dryRun`: it writes nothing), compared with what is stored now. */
export async function dryRunWrite(
  ctx: RequestContext,
  operation: string,
  run: RouteFn,
  input: RouteInput,
  current: CurrentStates,
): Promise<RouteResult> {
  const result = await run({ ...ctx, dryRun: true }, input);
  // A refusal as the write answers it, Retry-After included (a twin still in progress); a
  // replayed one without the replay's mark, as a dry run's successes are.
  if ((result.status ?? 200) >= 400) {
    const { 'Idempotent-Replayed': _replayed, ...headers } = result.headers ?? {};
    return { ...result, headers };
  }
  const doc = result.body as { data: unknown };
  if (operation === 'upsertProducts') {
    const reader = current.upsertProduct;
    if (!reader) throw new Error('the batch dry run needs the upsertProduct reader');
    return { body: { dry_run: true, data: await batchPlan(ctx, input, doc.data, reader) } };
  }
  // A replay of an earlier answer (the Idempotency-Key was used) changes nothing.
  const replayed = result.headers?.['Idempotent-Replayed'] === 'true';
  const after = doc.data as Data;
  const reader = current[operation as KeyedOperation];
  // A write without its reader is a wiring fault of its group, not "would create".
  if (!replayed && !reader) throw new Error(`no dry-run reader for ${operation}`);
  const before = replayed ? after : await reader?.(ctx, input);
  return { body: { dry_run: true, ...planOf(before, after), data: after } };
}

function planOf(before: Data | undefined, after: Data): { result: DryRunResult; changed_fields: string[] } {
  if (before === undefined) return { result: 'would_create', changed_fields: [] };
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
    (k) => !BOOKKEEPING.has(k) && JSON.stringify(before[k]) !== JSON.stringify(after[k]),
  );
  return { result: fields.length ? 'would_update' : 'unchanged', changed_fields: fields };
}

type BatchItem = { external_id: string; status: number; data: Data | null };

/** Each item that would succeed gets its plan; an item's error stays as the real batch answers it. */
async function batchPlan(ctx: RequestContext, input: RouteInput, items: unknown, reader: CurrentState) {
  const out: Data[] = [];
  const list = items as BatchItem[];
  for (let i = 0; i < list.length; i += 10) {
    const chunk = list.slice(i, i + 10);
    out.push(
      ...(await Promise.all(
        chunk.map(async (item) => {
          if (item.status >= 300 || !item.data) return item;
          const before = await reader(ctx, { ...input, pathParameters: { external_id: item.external_id } });
          return { ...item, ...planOf(before, item.data) };
        }),
      )),
    );
  }
  return out;
}
