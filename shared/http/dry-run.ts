import { DomainError } from '#domain/errors.ts';
import { externalIdFromPath } from '#domain/external-id.ts';
import { referenceFromPath } from '#domain/order/rules.ts';
import { currentMappedProduct, currentOrder, currentPage, currentTaxonomy, withoutWrites } from '#app/dry-run.ts';
import type { KeyedOperation } from './api-routes.ts';
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

/** Fields that move on every change and say nothing about what the change is. */
const BOOKKEEPING = new Set(['updated_at', 'created_at']);

type Data = Record<string, unknown>;
type Reader = (input: RouteInput) => Promise<Data | undefined>;

const xid = (input: RouteInput) =>
  externalIdFromPath(input.pathParameters.external_id) ?? input.pathParameters.external_id ?? '';
const offers = (input: RouteInput) => input.query.include === 'offers';

/** The current state of what each write addresses, in the shape of its answer's `data`. */
const CURRENT: Partial<Record<KeyedOperation, Reader>> = {
  upsertProduct: (i) => currentMappedProduct(i.principal, xid(i), offers(i)),
  updateProduct: (i) => currentMappedProduct(i.principal, xid(i), offers(i)),
  upsertCategory: (i) => currentTaxonomy('category', i.principal, xid(i)),
  upsertTag: (i) => currentTaxonomy('tag', i.principal, xid(i)),
  savePage: (i) => currentPage(i.principal, xid(i), true),
  publishPage: (i) => currentPage(i.principal, xid(i), false),
  unpublishPage: (i) => currentPage(i.principal, xid(i), false),
  setOrderStatus: (i) => currentOrder(i.principal, referenceFromPath(i.pathParameters.reference) ?? ''),
};

export const canDryRun = (operation: string): boolean =>
  operation === 'upsertProducts' || Object.hasOwn(CURRENT, operation);

/**
 * Reads and removes `dry_run` from a write's query: `true` or `false`, anything else is 422 (the
 * route would refuse an unknown parameter anyway, and a typo must not turn into a real write).
 */
export function takeDryRun(operation: string, query: Record<string, string>) {
  if (!canDryRun(operation) || !(DRY_RUN_PARAM in query)) return { dryRun: false, query };
  const { [DRY_RUN_PARAM]: value, ...rest } = query;
  if (value !== 'true' && value !== 'false')
    throw new DomainError('validation_failed', 'dry_run must be true or false.', DRY_RUN_PARAM);
  return { dryRun: value === 'true', query: rest };
}

/** What the write would do: its answer with every write held back, compared with what is stored now. */
export async function dryRunWrite(operation: string, run: RouteFn, input: RouteInput): Promise<RouteResult> {
  const { result } = await withoutWrites(() => run(input));
  if ((result.status ?? 200) >= 400) return { status: result.status, body: result.body };
  const doc = result.body as { data: unknown };
  if (operation === 'upsertProducts') return { body: { dry_run: true, data: await batchPlan(input, doc.data) } };
  // A replay of an earlier answer (the Idempotency-Key was used) changes nothing.
  const replayed = result.headers?.['Idempotent-Replayed'] === 'true';
  const after = doc.data as Data;
  const current = canDryRun(operation) ? CURRENT[operation as KeyedOperation] : undefined;
  const before = replayed ? after : await current?.(input);
  return { body: { dry_run: true, ...planOf(before, after), data: after } };
}

export function planOf(before: Data | undefined, after: Data): { result: DryRunResult; changed_fields: string[] } {
  if (before === undefined) return { result: 'would_create', changed_fields: [] };
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
    (k) => !BOOKKEEPING.has(k) && JSON.stringify(before[k]) !== JSON.stringify(after[k]),
  );
  return { result: fields.length ? 'would_update' : 'unchanged', changed_fields: fields };
}

type BatchItem = { external_id: string; status: number; data: Data | null };

/** Each item that would succeed gets its plan; an item's error stays as the real batch answers it. */
async function batchPlan(input: RouteInput, items: unknown) {
  const out: Data[] = [];
  const list = items as BatchItem[];
  for (let i = 0; i < list.length; i += 10) {
    const chunk = list.slice(i, i + 10);
    out.push(
      ...(await Promise.all(
        chunk.map(async (item) => {
          if (item.status >= 300 || !item.data) return item;
          const before = await currentMappedProduct(input.principal, item.external_id, offers(input));
          return { ...item, ...planOf(before, item.data) };
        }),
      )),
    );
  }
  return out;
}
