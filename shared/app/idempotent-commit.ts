import type { Key } from '#db/keys.ts';
import type { Item, TransactItem } from '#db/core/helpers.ts';
import type { StoredResponse } from '#db/idempotency/repo.ts';

/**
 * How a use case commits the stored answer of an idempotent request (docs/contract.md#idempotency) in the same
 * transaction as its state change, without a claim of its own. The HTTP front
 * (shared/http/idempotency.ts) opens the session; the use case reads `recordKey` in the same
 * BatchGetItem as its aggregate and hands what it found to `check` (which throws when the key
 * already answers this request), then calls `prepare` with the document it is about to answer,
 * puts `prepared.write` into its own TransactWriteItems and calls `committed` once that went
 * through. A commit that fails on that write throws `IdempotencyKeyTaken`.
 */
export interface Answer {
  status?: number;
  body: unknown;
}

export interface PreparedCompletion {
  readonly response: StoredResponse;
  /** One TransactWriteItems action: the finished record, put only where the key is free. */
  readonly write: TransactItem;
}

export interface IdempotentSession {
  readonly recordKey: Key;
  check(record: Item | undefined): void;
  prepare(answer: Answer): PreparedCompletion;
  committed(prepared: PreparedCompletion): void;
}

/**
 * Thrown by a use case when its commit failed on the idempotency record: a twin with the same key
 * stored its answer first (`busy: false`), or its transaction holds the record right now (`busy`).
 */
export class IdempotencyKeyTaken extends Error {
  constructor(readonly busy: boolean) {
    super('another request with this idempotency key committed first');
    this.name = 'IdempotencyKeyTaken';
  }
}
