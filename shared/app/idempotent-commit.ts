import type { completionWrite, StoredResponse } from '../db/idempotency.repo.ts';

/**
 * How a use case commits the stored answer of an idempotent request (CONTRACT §8) in the same
 * transaction as its state change. The HTTP front (shared/http/idempotency.ts) opens the
 * session; the use case calls `prepare` with the document it is about to answer, puts
 * `prepared.write` into its own TransactWriteItems and calls `committed` once that went through.
 */
export interface Answer {
  status?: number;
  body: unknown;
}

export interface PreparedCompletion {
  readonly response: StoredResponse;
  /** One TransactWriteItems action: completes the record, guarded on this request's lock. */
  readonly write: ReturnType<typeof completionWrite>;
}

export interface IdempotentSession {
  prepare(answer: Answer): PreparedCompletion;
  committed(prepared: PreparedCompletion): void;
}

/** Thrown by a use case when its commit failed on the idempotency record's condition. */
export class IdempotencyLockLost extends Error {
  constructor() {
    super('the idempotency record is no longer held by this request');
    this.name = 'IdempotencyLockLost';
  }
}
