import { DomainError } from '#domain/errors.ts';
import type { RouteResult } from './response.ts';
import { errorBody, statusOf } from './error-status.ts';
import type { RouteInput } from './http-handler.ts';
import { IdempotencyKeyTaken, type IdempotentSession } from '#app/idempotent-commit.ts';
import { IDEMPOTENCY_HEADER, parseIdempotencyKey, requestFingerprint } from '#domain/idempotency.ts';
import {
  answerWrite,
  classifyExisting,
  idempotencyRecordKey,
  readIdempotencyOutcome,
  storeAnswer,
  type Refusal,
  type StoredResponse,
} from '#db/idempotency/repo.ts';
import { addInvocationContext } from '#shared/log.ts';

/**
 * An endpoint that takes an Idempotency-Key (docs/contract.md#idempotency), as one wrapper:
 *
 *   const result = await idempotent(input, { precheck: () => parse(Body, input.body), run: async (session, body) => ... });
 *
 * `precheck` (optional) is pure validation; its error is stored at once with one conditional PutItem.
 * `run` does the work: it reads `session.recordKey` with its aggregate and passes the record to
 * `session.check` (a replay, a reuse or a twin in flight ends the request there); a `run` that
 * changes state calls `session.prepare(result)`, puts `prepared.write` into its own
 * TransactWriteItems, then `session.committed(prepared)`. Any other result, and a DomainError it
 * throws, is stored with one conditional PutItem. Nothing is stored for a failure of ours (5xx),
 * so the client's retry runs again at once.
 *
 * Replays are byte for byte: what is sent is always the stored string parsed back, and
 * JSON.stringify(JSON.parse(s)) === s for every s that JSON.stringify produced (key order,
 * number and string spelling all round-trip), so the first answer and every replay are the
 * same bytes. Response headers other than Content-Type are not part of the stored answer.
 */
export function idempotencyKeyOf(headers: Record<string, string>): string {
  const parsed = parseIdempotencyKey(headers[IDEMPOTENCY_HEADER.toLowerCase()]);
  if (parsed.ok) return parsed.key;
  if (parsed.reason === 'missing')
    throw new DomainError('idempotency_key_required', parsed.message, IDEMPOTENCY_HEADER);
  throw new DomainError('validation_failed', parsed.message, IDEMPOTENCY_HEADER);
}

/** On every answer that is a replay of an earlier one (Stripe's name for it). */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

const freeze = (result: RouteResult): StoredResponse => ({
  status: result.status ?? 200,
  body: JSON.stringify(result.body),
});
const thaw = (stored: StoredResponse): RouteResult => ({
  status: stored.status,
  body: JSON.parse(stored.body) as unknown,
});
const errorResult = (err: DomainError): RouteResult => ({ status: statusOf(err.code), body: errorBody(err) });
/** Answers about the request itself are stored; failures of ours (5xx) are not, so a retry runs again. */
const storable = (err: unknown): err is DomainError => err instanceof DomainError && statusOf(err.code) < 500;

/** Thrown through `run` by `session.check` when the record already answers the request. */
class Refused extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.outcome);
  }
}

function refusal(outcome: Refusal): RouteResult {
  switch (outcome.outcome) {
    case 'replay':
      addInvocationContext({ idempotency_replay: true });
      // The same bytes as the first answer; the header tells a client this one changed nothing.
      return { ...thaw(outcome.response), headers: { [REPLAYED_HEADER]: 'true' } };
    case 'reused':
      throw new DomainError(
        'idempotency_key_reused',
        `This ${IDEMPOTENCY_HEADER} was already used for a different request.`,
        IDEMPOTENCY_HEADER,
      );
    case 'in_progress':
      throw new DomainError(
        'idempotency_in_progress',
        `A request with this ${IDEMPOTENCY_HEADER} is still being processed; retry shortly.`,
        IDEMPOTENCY_HEADER,
        1,
      );
  }
}

export async function idempotent<T>(
  input: RouteInput,
  steps: { precheck?: () => T; run: (session: IdempotentSession, checked: T) => Promise<RouteResult> },
): Promise<RouteResult> {
  const recordKey = idempotencyRecordKey({
    keyId: input.principal.keyId,
    method: input.method,
    path: input.path,
    key: idempotencyKeyOf(input.headers),
  });
  // No body and `{}` are the same request (a POST action may come without one).
  const fingerprint = requestFingerprint(input.body ?? {});
  const store = async (response: StoredResponse): Promise<RouteResult> => {
    const taken = await storeAnswer(recordKey, fingerprint, response);
    return taken ? refusal(taken) : thaw(response);
  };

  let checked: T;
  try {
    checked = steps.precheck ? steps.precheck() : (undefined as T);
  } catch (err) {
    if (!storable(err)) throw err;
    return store(freeze(errorResult(err)));
  }

  let stored: StoredResponse | undefined;
  const session: IdempotentSession = {
    recordKey,
    check: (record) => {
      const existing = classifyExisting(record, fingerprint, Date.now());
      if (existing) throw new Refused(existing);
    },
    prepare: (result) => {
      const response = freeze(result);
      return { response, write: answerWrite(recordKey, fingerprint, response) };
    },
    committed: (prepared) => {
      stored = prepared.response;
    },
  };

  let result: RouteResult;
  try {
    result = await steps.run(session, checked);
  } catch (err) {
    if (err instanceof Refused) return refusal(err.refusal);
    if (err instanceof IdempotencyKeyTaken)
      return refusal(err.busy ? { outcome: 'in_progress' } : await readIdempotencyOutcome(recordKey, fingerprint));
    if (!storable(err)) throw err;
    result = errorResult(err);
  }
  return stored ? thaw(stored) : store(freeze(result));
}
