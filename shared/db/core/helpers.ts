import type { RequestContext } from '#shared/context.ts';
import { randomUUID } from 'node:crypto';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  type BatchWriteCommandInput,
  type NativeAttributeValue,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { send, tableName } from './client.ts';
import type { Key } from '../keys.ts';

export type Item = Record<string, NativeAttributeValue>;

/** One action of a TransactWriteItems call, so modules can each contribute theirs to one transaction. */
export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

export function isConditionalCheckFailed(err: unknown): err is Error & { Item?: Item } {
  return err instanceof Error && err.name === 'ConditionalCheckFailedException';
}

/** Cancellation reasons of a failed transaction, one per action, `None` for actions that passed. */
export function cancellationReasons(err: unknown): { Code?: string; Item?: Item }[] | undefined {
  if (err instanceof Error && err.name === 'TransactionCanceledException') {
    return (err as Error & { CancellationReasons?: { Code?: string; Item?: Item }[] }).CancellationReasons ?? [];
  }
  return undefined;
}

/**
 * BatchGetItem over any number of keys in one round trip per 100 keys (plus retries of
 * UnprocessedKeys, which DynamoDB returns under throttling). Returns items by `pk|sk`.
 */
export async function batchGet(ctx: RequestContext, keysToRead: Key[], consistent = true): Promise<Map<string, Item>> {
  const found = new Map<string, Item>();
  const unique = [...new Map(keysToRead.map((k) => [`${k.pk}|${k.sk}`, k])).values()];
  for (let i = 0; i < unique.length; i += 100) {
    let request: Record<string, { Keys: Key[]; ConsistentRead: boolean }> | undefined = {
      [tableName()]: { Keys: unique.slice(i, i + 100), ConsistentRead: consistent },
    };
    for (let attempt = 0; request && Object.keys(request).length > 0; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** attempt)));
      const out = await send(ctx, new BatchGetCommand({ RequestItems: request }));
      for (const item of out.Responses?.[tableName()] ?? []) found.set(`${item.pk}|${item.sk}`, item);
      request = out.UnprocessedKeys as typeof request;
    }
  }
  return found;
}

export const itemKey = (k: Key) => `${k.pk}|${k.sk}`;

export type WriteRequest = NonNullable<BatchWriteCommandInput['RequestItems']>[string][number];

/**
 * Unconditional puts and deletes in BatchWriteItem calls of 25, `parallel` at a time, retrying
 * what DynamoDB leaves unprocessed (throttling) until all are written. Not atomic: for writes
 * whose order and partial failure do not matter (a derived index written again on retry).
 */
export async function batchWrite(ctx: RequestContext, requests: readonly WriteRequest[], parallel = 4): Promise<void> {
  const chunks = Array.from({ length: Math.ceil(requests.length / 25) }, (_, i) => requests.slice(i * 25, i * 25 + 25));
  let next = 0;
  const worker = async () => {
    for (let chunk = chunks[next++]; chunk; chunk = chunks[next++]) {
      let pending: WriteRequest[] = chunk;
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** attempt)));
        const out = await send(ctx, new BatchWriteCommand({ RequestItems: { [tableName()]: pending } }));
        pending = out.UnprocessedItems?.[tableName()] ?? [];
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, chunks.length) }, worker));
}

/**
 * One item read consistently, and with `alongside` another one in the same round trip (a
 * BatchGetItem; e.g. a request's idempotency record next to the record it changes).
 */
export async function getWithAlongside(
  ctx: RequestContext,
  key: Key,
  alongside?: Key,
): Promise<{ item: Item | undefined; alongside: Item | undefined }> {
  if (!alongside) {
    const out = await send(ctx, new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
    return { item: out.Item, alongside: undefined };
  }
  const found = await batchGet(ctx, [key, alongside]);
  return { item: found.get(itemKey(key)), alongside: found.get(itemKey(alongside)) };
}

/**
 * The item a failed condition handed back (ReturnValuesOnConditionCheckFailure). The document
 * client does not unmarshall error payloads, so this does.
 */
export function itemFromError(item: unknown): Item | undefined {
  if (!item || typeof item !== 'object') return undefined;
  const values = Object.values(item as Record<string, unknown>);
  const marshalled =
    values.length > 0 &&
    values.every(
      (v) =>
        v !== null &&
        typeof v === 'object' &&
        Object.keys(v as object).length === 1 &&
        /^(S|N|B|SS|NS|BS|M|L|NULL|BOOL)$/.test(Object.keys(v as object)[0] ?? ''),
    );
  return marshalled ? unmarshall(item as Record<string, AttributeValue>) : (item as Item);
}

/** Every page of a Query (for partitions known to be small: a key's deliveries, a store's keys). */
export async function queryAll(
  ctx: RequestContext,
  input: ConstructorParameters<typeof QueryCommand>[0],
): Promise<Item[]> {
  const items: Item[] = [];
  let start: Item | undefined;
  do {
    const out = await send(ctx, new QueryCommand({ ...input, ExclusiveStartKey: start }));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

/**
 * A TransactWriteItems call's actions under names, in the order they are sent. DynamoDB answers a
 * cancelled transaction with one reason per action, by position; `cancelledBy` hands them back
 * by name, so no caller counts positions (`reasons.slice(3)`, `reasons[items.length - 1]`). A
 * name may stand for several actions (a page's slug moves, the caller's own writes) or none.
 */
export interface NamedTransaction<N extends string> {
  /** The actions, in order: `TransactItems` of the call. */
  items: TransactItem[];
  /** The reasons of a cancelled transaction by name; undefined when `err` is not a cancellation. */
  cancelledBy(err: unknown): Cancellation<N> | undefined;
  /**
   * Sends the actions as one TransactWriteItems: undefined when it committed, its Cancellation
   * when a condition or a racing transaction cancelled it; any other error is thrown. The request
   * token (a fresh one by default) turns the SDK's retry of a commit whose answer was lost into a
   * success, not a failure of its own guards.
   */
  send(ctx: RequestContext, token?: string): Promise<Cancellation<N> | undefined>;
}

export interface Cancellation<N extends string> {
  /** Whether an action of `name` failed its condition. */
  failed(name: N): boolean;
  /** Whether an action of `name` lost to a concurrent transaction (`TransactionConflict`). */
  conflicted(name: N): boolean;
  /**
   * The item the first failed action of `name` handed back (its `ReturnValuesOnConditionCheckFailure`),
   * unmarshalled; undefined when none failed or it asked for nothing.
   */
  item(name: N): Item | undefined;
  /**
   * How a guard part failed: `busy: false` its condition, `busy: true` a racing transaction on it
   * (the idempotency record's `own` part: shared/app/idempotent-commit.ts reads both); undefined
   * when it held.
   */
  guard(name: N): { busy: boolean } | undefined;
}

type Part<N extends string> = readonly [name: N, actions: TransactItem | readonly TransactItem[] | undefined];

const CONDITION = 'ConditionalCheckFailed';

export function namedTransaction<N extends string>(parts: readonly Part<N>[]): NamedTransaction<N> {
  const items: TransactItem[] = [];
  const spans = new Map<N, readonly [number, number]>();
  for (const [name, actions] of parts) {
    if (spans.has(name)) throw new Error(`transaction part "${name}" is named twice`);
    const list = actions === undefined ? [] : Array.isArray(actions) ? actions : [actions as TransactItem];
    spans.set(name, [items.length, items.length + list.length]);
    items.push(...list);
  }
  const cancelledBy = (err: unknown): Cancellation<N> | undefined => {
    const reasons = cancellationReasons(err);
    if (!reasons) return undefined;
    const of = (name: N) => {
      const [from, to] = spans.get(name) ?? [0, 0];
      return reasons.slice(from, to);
    };
    const failed = (name: N) => of(name).some((r) => r.Code === CONDITION);
    const conflicted = (name: N) => of(name).some((r) => r.Code === 'TransactionConflict');
    return {
      failed,
      conflicted,
      item: (name) => itemFromError(of(name).find((r) => r.Code === CONDITION)?.Item),
      guard: (name) => (failed(name) ? { busy: false } : conflicted(name) ? { busy: true } : undefined),
    };
  };
  return {
    items,
    cancelledBy,
    async send(ctx, token = randomUUID()) {
      try {
        await send(ctx, new TransactWriteCommand({ TransactItems: items, ClientRequestToken: token }));
        return undefined;
      } catch (err) {
        const cancelled = cancelledBy(err);
        if (!cancelled) throw err;
        return cancelled;
      }
    },
  };
}
