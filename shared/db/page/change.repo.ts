import type { RequestContext } from '#shared/context.ts';
import { tableName } from '../core/client.ts';
import { TABLE } from '../core/table.ts';
import { keys } from '../keys.ts';
import { type TransactItem, namedTransaction } from '../core/helpers.ts';
import { pageItem, pageLinkItem, slugClaim, toPage } from './repo.ts';
import type { Page } from '#domain/page/page.ts';
import type { StoreEvent } from '#domain/event/event.ts';
import { eventPut } from '../event/item.ts';

export type ChangeResult =
  | { kind: 'committed' }
  /** The page changed since `previous` was read; `current` is what it is now (if known). */
  | { kind: 'stale'; current: Page | undefined }
  /** Another page of the store holds the new slug. */
  | { kind: 'slug_taken' }
  /** One of the caller's own writes (`withWrites`) failed its condition, or (`busy`) another transaction held it. */
  | { kind: 'guard_failed'; busy: boolean }
  /** Another transaction held one of the items; nothing was written, try again. */
  | { kind: 'conflict' };

const FIELDS = [
  'page_type',
  'title',
  'slug',
  'body',
  'status',
  'published_at',
  'draft',
  'updated_at',
  TABLE.gsi1.partitionKey,
] as const;

/** The slugs a page holds claims on: its live one and its revision's. */
const slugsHeld = (p: Page) => new Set([p.slug, ...(p.draft ? [p.draft.slug] : [])]);

/**
 * Writes `next` over `previous`, guarded on `previous.updated_at`, in one TransactWriteItems with
 * the external-id item's copy of the page, the slug claim moves, the event the use case raised
 * (a publish or unpublish; a save raises none) and the caller's writes (the idempotency record of
 * a publish). Only the page attributes that differ are SET.
 */
export async function commitPageChange(
  ctx: RequestContext,
  previous: Page,
  next: Page,
  event?: StoreEvent,
  withWrites: TransactItem[] = [],
): Promise<ChangeResult> {
  const before = pageItem(previous);
  const after = pageItem(next);
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':previous': previous.updated_at };
  const sets: string[] = [];
  for (const [i, field] of FIELDS.entries()) {
    if (JSON.stringify(before[field]) === JSON.stringify(after[field]) && field !== 'updated_at') continue;
    names[`#f${i}`] = field;
    values[`:f${i}`] = after[field] ?? null;
    sets.push(`#f${i} = :f${i}`);
  }
  names['#updated'] = 'updated_at';
  const pageUpdate: TransactItem = {
    Update: {
      TableName: tableName(),
      Key: keys.page(next.store_id, next.id),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: '#updated = :previous',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
  const held = slugsHeld(previous);
  const holds = slugsHeld(next);
  const claims: TransactItem[] = [...holds]
    .filter((slug) => !held.has(slug))
    .map((slug) => ({
      Put: {
        TableName: tableName(),
        Item: slugClaim({ ...next, slug }),
        ConditionExpression: 'attribute_not_exists(pk) OR page_id = :id',
        ExpressionAttributeValues: { ':id': next.id },
      },
    }));
  const releases: TransactItem[] = [...held]
    .filter((slug) => !holds.has(slug))
    .map((slug) => ({
      Delete: {
        TableName: tableName(),
        Key: keys.slug(previous.store_id, slug),
        ConditionExpression: 'page_id = :id',
        ExpressionAttributeValues: { ':id': previous.id },
      },
    }));
  const tx = namedTransaction([
    ['page', pageUpdate],
    ['link', { Put: { TableName: tableName(), Item: pageLinkItem(next) } }],
    ['claims', claims],
    ['releases', releases],
    ['event', event && eventPut(event)],
    ['own', withWrites],
  ]);
  const cancelled = await tx.send(ctx);
  if (!cancelled) return { kind: 'committed' };
  const own = cancelled.guard('own');
  if (own) return { kind: 'guard_failed', ...own };
  if (cancelled.failed('page')) {
    const old = cancelled.item('page');
    return { kind: 'stale', current: old ? toPage(old) : undefined };
  }
  // The page was as read, so a new claim is held by another page.
  if (cancelled.failed('claims')) return { kind: 'slug_taken' };
  return { kind: 'conflict' };
}
