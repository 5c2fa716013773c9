import type { RequestContext } from '#shared/context.ts';
import { createHash } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '../core/client.ts';
import { ENTITY, TABLE } from '../core/table.ts';
import { keys, type Key } from '../keys.ts';
import { isConditionalCheckFailed, itemFromError, type Item, type TransactItem } from '../core/helpers.ts';
import { IDEMPOTENCY_RETENTION_SECONDS } from '#domain/idempotency.ts';

/**
 * Idempotency records (docs/contract.md#idempotency), one per key id + method + path + Idempotency-Key, written
 * once and finished: `{ state: completed, fingerprint, response_status, response_body }`, the
 * bytes that were sent. There is no separate claim: a request reads the record in the same
 * BatchGetItem as the record it changes, decides, and puts the finished record into its own
 * TransactWriteItems (`answerWrite`), so the change, its event and the stored response commit
 * together in one round trip. An answer that changes nothing (an error, a no-op) is stored with
 * one conditional PutItem (`storeAnswer`).
 *
 * Both writes are conditional on the key being free: absent, expired (DynamoDB's TTL deletes
 * records some time after `ttl`; until then an expired record is treated as absent), or an
 * abandoned `in_progress` lease with the same body. Of twins racing with one key, exactly one
 * write lands; the others fail that condition and answer from the record it left (replay, or 422
 * for another body), or, while the winner's transaction still holds the record, 409.
 *
 * `in_progress` records ({ owner, lease_expires_at }) are only written by the version before this
 * one, which claimed the key first; they are read as "still running" until their lease ends and
 * disappear with their 24 h TTL.
 */
export interface IdempotencyScope {
  keyId: number;
  method: string;
  path: string;
  key: string;
}

export interface StoredResponse {
  status: number;
  /** Exactly the body string that was sent. */
  body: string;
}

/** What a request meets when the key is already taken. */
export type Refusal = { kind: 'replay'; response: StoredResponse } | { kind: 'in_progress' } | { kind: 'reused' };

const STATE = { inProgress: 'in_progress', completed: 'completed' } as const;

/** A sort key is at most 1 KiB; an over-long path (a huge reference) is scoped by its hash instead. */
const MAX_PATH_IN_KEY = 512;

export function idempotencyRecordKey(scope: IdempotencyScope): Key {
  const path =
    Buffer.byteLength(scope.path) > MAX_PATH_IN_KEY
      ? `sha256:${createHash('sha256').update(scope.path).digest('base64url')}`
      : scope.path;
  return keys.idempotency(scope.keyId, scope.method, path, scope.key);
}

/** What the record as read says about this request: pure, so the read, the failed write and the re-read agree. */
export function classifyExisting(item: Item | undefined, fingerprint: string, nowMs: number): Refusal | undefined {
  if (!item || Number(item[TABLE.ttlAttribute]) * 1000 <= nowMs) return undefined;
  if (item.fingerprint !== fingerprint) return { kind: 'reused' };
  if (item.state === STATE.completed)
    return { kind: 'replay', response: { status: Number(item.response_status), body: String(item.response_body) } };
  if (Number(item.lease_expires_at) <= nowMs) return undefined;
  return { kind: 'in_progress' };
}

/** The finished record, put only where the key is free (see the module comment). */
function answerPut(recordKey: Key, fingerprint: string, response: StoredResponse, nowMs: number) {
  return {
    TableName: tableName(),
    Item: {
      ...recordKey,
      type: ENTITY.idempotency,
      state: STATE.completed,
      fingerprint,
      response_status: response.status,
      response_body: response.body,
      created_at: new Date(nowMs).toISOString(),
      [TABLE.ttlAttribute]: Math.floor(nowMs / 1000) + IDEMPOTENCY_RETENTION_SECONDS,
    },
    ConditionExpression:
      'attribute_not_exists(pk) OR #ttl <= :nowSec OR (#state = :inProgress AND lease_expires_at <= :nowMs AND fingerprint = :fp)',
    ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute, '#state': 'state' },
    ExpressionAttributeValues: {
      ':nowSec': Math.floor(nowMs / 1000),
      ':nowMs': nowMs,
      ':inProgress': STATE.inProgress,
      ':fp': fingerprint,
    },
  };
}

/** The stored answer as one action of the caller's own TransactWriteItems. */
export function answerWrite(recordKey: Key, fingerprint: string, response: StoredResponse): TransactItem {
  return { Put: answerPut(recordKey, fingerprint, response, Date.now()) };
}

/**
 * Stores the answer of a request that changed nothing. Undefined when stored; otherwise why the
 * key was taken meanwhile (the failed condition hands the record back, so no second read).
 */
export async function storeAnswer(
  ctx: RequestContext,
  recordKey: Key,
  fingerprint: string,
  response: StoredResponse,
): Promise<Refusal | undefined> {
  const nowMs = Date.now();
  try {
    await send(
      ctx,
      new PutCommand({
        ...answerPut(recordKey, fingerprint, response, nowMs),
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return undefined;
  } catch (err) {
    // The record is inside another request's commit right now: that request is still running.
    if (err instanceof Error && err.name === 'TransactionConflictException') return { kind: 'in_progress' };
    if (!isConditionalCheckFailed(err)) throw err;
    return classifyExisting(itemFromError(err.Item), fingerprint, nowMs) ?? { kind: 'in_progress' };
  }
}

/** After a commit lost on the record's condition: what the record says now. */
export async function readIdempotencyOutcome(
  ctx: RequestContext,
  recordKey: Key,
  fingerprint: string,
): Promise<Refusal> {
  const out = await send(ctx, new GetCommand({ TableName: tableName(), Key: recordKey, ConsistentRead: true }));
  return classifyExisting(out.Item, fingerprint, Date.now()) ?? { kind: 'in_progress' };
}
