import type { RequestContext } from '#shared/context.ts';
import type { Key } from '#db/keys.ts';
import type { Item, TransactItem } from '#db/core/helpers.ts';
import {
  answerWrite,
  classifyExisting,
  idempotencyRecordKey,
  readIdempotencyOutcome,
  storeAnswer as storeRecord,
  type IdempotencyScope,
  type Refusal,
  type StoredResponse,
} from '#db/idempotency/repo.ts';
import { requestFingerprint } from '#domain/idempotency.ts';

export type { Refusal, StoredResponse };

/**
 * Idempotency (docs/contract.md#idempotency) as a step of the use case. A request with an
 * Idempotency-Key is an `IdempotentRequest`; the use case reads its record (`recordKey`) in the
 * same BatchGetItem as its aggregate and checks it (`checkRecord`): a `replay`, a `reused` key or
 * a twin `in_progress` is the use case's result, returned up as a value. A fresh request that
 * changes state puts `prepareAnswer(...).write` into its own TransactWriteItems, so the change,
 * its event and the stored answer commit together; a commit that fails on that write returns
 * what the record says then (`afterTaken`). The HTTP front (shared/http/idempotency.ts) maps each
 * outcome to a response, and stores an answer that changed nothing with `storeAnswer`.
 */
export interface IdempotentRequest {
  readonly recordKey: Key;
  /** The body's fingerprint: the same request is the same body, up to whitespace and key order. */
  readonly fingerprint: string;
}

/** An answer as the client receives it: the status (200 by default) and the JSON body. */
export interface Answer {
  status?: number;
  body: unknown;
}

/**
 * What an idempotent use case returns: its answer (`stored`: the bytes it committed with its
 * change; absent when it changed nothing and the front stores the answer), or a refusal.
 */
export type Idempotent<T> = { kind: 'answered'; answer: T; stored: StoredResponse | undefined } | Refusal;

/** The use case's own answer; `stored` when it committed it with its change. */
export const answered = <T>(answer: T, stored?: StoredResponse): Idempotent<T> => ({
  kind: 'answered',
  answer,
  stored,
});

/** What a request meets in its record: nothing yet (`fresh`), or a refusal that is its answer. */
export type IdempotencyCheck = { kind: 'fresh' } | Refusal;

/**
 * No body and `{}` are the same request (a POST action may come without one). `headers` that are
 * part of the request (a condition) join the fingerprint only when sent, so the fingerprint of a
 * request without them stays what it was (records stored before they counted still match).
 */
export function idempotentRequest(
  scope: IdempotencyScope,
  body: unknown,
  headers: Record<string, string> = {},
): IdempotentRequest {
  const what = Object.keys(headers).length === 0 ? (body ?? {}) : { body: body ?? {}, headers };
  return { recordKey: idempotencyRecordKey(scope), fingerprint: requestFingerprint(what) };
}

export function checkRecord(request: IdempotentRequest, record: Item | undefined): IdempotencyCheck {
  return classifyExisting(record, request.fingerprint, Date.now()) ?? { kind: 'fresh' };
}

/**
 * The stored form of an answer: exactly the bytes sent. JSON.stringify(JSON.parse(s)) === s for
 * every s that JSON.stringify produced, so the first answer and every replay are the same bytes.
 */
export const frozen = (answer: Answer): StoredResponse => ({
  status: answer.status ?? 200,
  body: JSON.stringify(answer.body),
});

export interface PreparedAnswer {
  readonly response: StoredResponse;
  /** One TransactWriteItems action: the finished record, put only where the key is free. */
  readonly write: TransactItem;
}

export function prepareAnswer(request: IdempotentRequest, answer: Answer): PreparedAnswer {
  const response = frozen(answer);
  return { response, write: answerWrite(request.recordKey, request.fingerprint, response) };
}

/**
 * A commit that failed on the record's write: a twin stored its answer first (what the record
 * says now), or its transaction holds the record right now (`busy`: still in progress).
 */
export async function afterTaken(ctx: RequestContext, request: IdempotentRequest, busy: boolean): Promise<Refusal> {
  return busy ? { kind: 'in_progress' } : readIdempotencyOutcome(ctx, request.recordKey, request.fingerprint);
}

/** Stores an answer that changed nothing (one conditional PutItem); a twin's answer if it got there first. */
export async function storeAnswer(
  ctx: RequestContext,
  request: IdempotentRequest,
  response: StoredResponse,
): Promise<{ kind: 'stored' } | Refusal> {
  // A dry run stores nothing: the key stays free for the real call (docs/api.md#dry-runs).
  if (ctx.dryRun) return { kind: 'stored' };
  return (await storeRecord(ctx, request.recordKey, request.fingerprint, response)) ?? { kind: 'stored' };
}
