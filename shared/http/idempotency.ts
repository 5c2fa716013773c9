import { DomainError } from '../domain/errors.ts';
import type { RouteResult } from './response.ts';
import { errorBody, statusOf } from './error-status.ts';
import type { RouteInput } from './http-handler.ts';
import { IdempotencyLockLost, type IdempotentSession } from '../app/idempotent-commit.ts';
import { IDEMPOTENCY_HEADER, parseIdempotencyKey, requestFingerprint } from '../domain/idempotency.ts';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  completionWrite,
  readIdempotencyOutcome,
  releaseIdempotencyKey,
  type ClaimResult,
  type StoredResponse,
} from '../db/idempotency.repo.ts';
import { errorFields, log } from '../log.ts';
import { addInvocationContext } from '../log-context.ts';

/**
 * An endpoint that takes an Idempotency-Key (CONTRACT §8), as one wrapper:
 *
 *   const result = await idempotent(input, { precheck: () => parse(Body, input.body), run: async (session, body) => ... });
 *
 * `precheck` (optional) is pure validation; its error is stored with the claim in one write. `run` does
 * the work; a DomainError it throws is the stored answer too. A `run` that changes state calls
 * `session.prepare(result)` and puts `prepared.write` into its own TransactWriteItems, then
 * `session.committed(prepared)`; any other result is stored with one conditional Update.
 *
 * Replays are byte for byte: what is sent is always the stored string parsed back, and
 * JSON.stringify(JSON.parse(s)) === s for every s that JSON.stringify produced (key order,
 * number and string spelling all round-trip), so the first answer and every replay are the
 * same bytes. Response headers other than Content-Type are not part of the stored answer.
 */
export function idempotencyKeyOf(headers: Record<string, string>): string {
  const parsed = parseIdempotencyKey(headers[IDEMPOTENCY_HEADER.toLowerCase()]);
  if (parsed.ok) return parsed.key;
  if (parsed.reason === 'missing') throw new DomainError('idempotency_key_required', parsed.message, IDEMPOTENCY_HEADER);
  throw new DomainError('validation_failed', parsed.message, IDEMPOTENCY_HEADER);
}

const freeze = (result: RouteResult): StoredResponse => ({ status: result.status ?? 200, body: JSON.stringify(result.body) });
const thaw = (stored: StoredResponse): RouteResult => ({ status: stored.status, body: JSON.parse(stored.body) as unknown });
const errorResult = (err: DomainError): RouteResult => ({ status: statusOf(err.code), body: errorBody(err) });
/** Answers about the request itself are stored; failures of ours (5xx) are not, so a retry runs again. */
const storable = (err: unknown): err is DomainError => err instanceof DomainError && statusOf(err.code) < 500;

function refusal(outcome: Exclude<ClaimResult, { outcome: 'acquired' }>): RouteResult {
  switch (outcome.outcome) {
    case 'replay':
      addInvocationContext({ idempotency_replay: true });
      return thaw(outcome.response);
    case 'reused':
      throw new DomainError('idempotency_key_reused', `This ${IDEMPOTENCY_HEADER} was already used for a different request.`, IDEMPOTENCY_HEADER);
    case 'in_progress':
      throw new DomainError('idempotency_in_progress', `A request with this ${IDEMPOTENCY_HEADER} is still being processed; retry shortly.`, IDEMPOTENCY_HEADER, 1);
  }
}

export async function idempotent<T>(
  input: RouteInput,
  steps: { precheck?: () => T; run: (session: IdempotentSession, checked: T) => Promise<RouteResult> },
): Promise<RouteResult> {
  const scope = { keyId: input.principal.keyId, method: input.method, path: input.path, key: idempotencyKeyOf(input.headers) };
  // No body and `{}` are the same request (a POST action may come without one).
  const fingerprint = requestFingerprint(input.body ?? {});

  let checked: T | undefined;
  let early: StoredResponse | undefined;
  try {
    checked = steps.precheck?.();
  } catch (err) {
    if (!storable(err)) throw err;
    early = freeze(errorResult(err));
  }

  const claim = await claimIdempotencyKey(scope, fingerprint, { completedWith: early });
  if (claim.outcome !== 'acquired') return refusal(claim);
  if (early) return thaw(early);

  const lock = claim.lock;
  let stored: StoredResponse | undefined;
  const session: IdempotentSession = {
    prepare: (result) => {
      const response = freeze(result);
      return { response, write: completionWrite(lock, response) };
    },
    committed: (prepared) => {
      stored = prepared.response;
    },
  };

  let result: RouteResult;
  try {
    result = await steps.run(session, checked as T);
  } catch (err) {
    if (err instanceof IdempotencyLockLost) return refusal(await readIdempotencyOutcome(lock, fingerprint));
    if (!storable(err)) {
      await releaseIdempotencyKey(lock).catch((e: unknown) => log('warn', 'could not release idempotency key', errorFields(e)));
      throw err;
    }
    result = errorResult(err);
  }
  if (stored) return thaw(stored);
  const response = freeze(result);
  if (!(await completeIdempotencyKey(lock, response))) {
    // Only after outliving the lease: another request holds the key now and will store its own.
    log('warn', 'idempotency lease expired before completion', { request_id: input.requestId });
  }
  return thaw(response);
}
