import { createHash, randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';
import { ENTITY, TABLE } from './table.ts';
import { keys, type Key } from './keys.ts';
import { isConditionalCheckFailed, itemFromError, type Item, type TransactItem } from './helpers.ts';
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_RETENTION_SECONDS } from '../domain/idempotency.ts';

/**
 * Idempotency records (CONTRACT §8), one per key id + method + path + Idempotency-Key:
 *
 *   in_progress  { owner, fingerprint, lease_expires_at }   claimed by one request
 *   completed    { fingerprint, response_status, response_body }   the bytes that were sent
 *
 * Every write is conditional. A claim is one PutItem that also hands back the record it lost to
 * (ReturnValuesOnConditionCheckFailure), so replay / reuse / in-progress cost one round trip.
 * The completion is an Update guarded on `state = in_progress AND owner = me`; a caller that
 * changes state puts it into its own TransactWriteItems (`completionWrite`), so the change, its
 * event and the stored response commit together. DynamoDB's TTL deletes records some time after
 * `ttl`; until then an expired record is treated as absent.
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

export interface IdempotencyLock {
  readonly recordKey: Key;
  readonly owner: string;
}

export type ClaimResult =
  | { outcome: 'acquired'; lock: IdempotencyLock }
  | { outcome: 'replay'; response: StoredResponse }
  | { outcome: 'in_progress' }
  | { outcome: 'reused' };

const STATE = { inProgress: 'in_progress', completed: 'completed' } as const;

/** A sort key is at most 1 KiB; an over-long path (a huge reference) is scoped by its hash instead. */
const MAX_PATH_IN_KEY = 512;

export function idempotencyRecordKey(scope: IdempotencyScope): Key {
  const path = Buffer.byteLength(scope.path) > MAX_PATH_IN_KEY ? `sha256:${createHash('sha256').update(scope.path).digest('base64url')}` : scope.path;
  return keys.idempotency(scope.keyId, scope.method, path, scope.key);
}

/** What a request meets when the key is taken: pure, so the claim and the re-read agree. */
export function classifyExisting(item: Item | undefined, fingerprint: string, nowMs: number): Exclude<ClaimResult, { outcome: 'acquired' }> | undefined {
  if (!item || Number(item[TABLE.ttlAttribute]) * 1000 <= nowMs) return undefined;
  if (item.fingerprint !== fingerprint) return { outcome: 'reused' };
  if (item.state === STATE.completed) return { outcome: 'replay', response: { status: Number(item.response_status), body: String(item.response_body) } };
  if (Number(item.lease_expires_at) <= nowMs) return undefined;
  return { outcome: 'in_progress' };
}

/**
 * Takes the key for this request, or says why not. With `completedWith` the record is written
 * finished at once (an answer known before any other I/O, e.g. a validation error).
 */
export async function claimIdempotencyKey(
  scope: IdempotencyScope,
  fingerprint: string,
  options: { completedWith?: StoredResponse; nowMs?: number } = {},
): Promise<ClaimResult> {
  const recordKey = idempotencyRecordKey(scope);
  for (let attempt = 0; ; attempt++) {
    const nowMs = options.nowMs ?? Date.now();
    const owner = randomUUID();
    const done = options.completedWith;
    try {
      await db().send(
        new PutCommand({
          TableName: tableName(),
          Item: {
            ...recordKey,
            type: ENTITY.idempotency,
            fingerprint,
            owner,
            created_at: new Date(nowMs).toISOString(),
            [TABLE.ttlAttribute]: Math.floor(nowMs / 1000) + IDEMPOTENCY_RETENTION_SECONDS,
            ...(done
              ? { state: STATE.completed, response_status: done.status, response_body: done.body }
              : { state: STATE.inProgress, lease_expires_at: nowMs + IDEMPOTENCY_LEASE_MS }),
          },
          // Free, expired (TTL not yet swept), or abandoned by a crashed request with the same body.
          ConditionExpression:
            'attribute_not_exists(pk) OR #ttl <= :nowSec OR (#state = :inProgress AND lease_expires_at <= :nowMs AND fingerprint = :fp)',
          ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute, '#state': 'state' },
          ExpressionAttributeValues: { ':nowSec': Math.floor(nowMs / 1000), ':nowMs': nowMs, ':inProgress': STATE.inProgress, ':fp': fingerprint },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { outcome: 'acquired', lock: { recordKey, owner } };
    } catch (err) {
      // The record is inside another request's commit right now: that request is still running.
      if (err instanceof Error && err.name === 'TransactionConflictException') return { outcome: 'in_progress' };
      if (!isConditionalCheckFailed(err)) throw err;
      const existing = classifyExisting(itemFromError(err.Item), fingerprint, nowMs);
      if (existing) return existing;
      // The record vanished or expired between our clock and the condition: try once more.
      if (attempt >= 1) return { outcome: 'in_progress' };
    }
  }
}

/** The completion as one action of the caller's own TransactWriteItems. */
export function completionWrite(lock: IdempotencyLock, response: StoredResponse): TransactItem {
  return { Update: { TableName: tableName(), ...completionUpdate(lock, response) } };
}

function completionUpdate(lock: IdempotencyLock, response: StoredResponse) {
  return {
    Key: lock.recordKey,
    UpdateExpression: 'SET #state = :completed, response_status = :status, response_body = :body, completed_at = :at REMOVE lease_expires_at',
    ConditionExpression: '#state = :inProgress AND #owner = :owner',
    ExpressionAttributeNames: { '#state': 'state', '#owner': 'owner' },
    ExpressionAttributeValues: {
      ':completed': STATE.completed,
      ':inProgress': STATE.inProgress,
      ':owner': lock.owner,
      ':status': response.status,
      ':body': response.body,
      ':at': new Date().toISOString(),
    },
  };
}

/**
 * Stores the response of a request that changed nothing (an error, a no-op). Returns false when
 * the lock was lost: the request outlived its lease and another one took the key over.
 */
export async function completeIdempotencyKey(lock: IdempotencyLock, response: StoredResponse): Promise<boolean> {
  try {
    await db().send(new UpdateCommand({ TableName: tableName(), ...completionUpdate(lock, response) }));
    return true;
  } catch (err) {
    if (isConditionalCheckFailed(err)) return false;
    throw err;
  }
}

/** Gives the key back after an unexpected failure, so that the client's retry runs at once. */
export async function releaseIdempotencyKey(lock: IdempotencyLock): Promise<void> {
  try {
    await db().send(
      new DeleteCommand({
        TableName: tableName(),
        Key: lock.recordKey,
        // Never a completed record: the failure may have come after the commit.
        ConditionExpression: '#state = :inProgress AND #owner = :owner',
        ExpressionAttributeNames: { '#state': 'state', '#owner': 'owner' },
        ExpressionAttributeValues: { ':inProgress': STATE.inProgress, ':owner': lock.owner },
      }),
    );
  } catch (err) {
    if (!isConditionalCheckFailed(err)) throw err;
  }
}

/** After a commit lost on the idempotency condition: what the record says now. */
export async function readIdempotencyOutcome(lock: IdempotencyLock, fingerprint: string): Promise<Exclude<ClaimResult, { outcome: 'acquired' }>> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: lock.recordKey, ConsistentRead: true }));
  return classifyExisting(out.Item, fingerprint, Date.now()) ?? { outcome: 'in_progress' };
}
