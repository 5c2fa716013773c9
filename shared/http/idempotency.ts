import type { RequestContext } from '#shared/context.ts';
import { isRefused, refused, type Refused } from '#domain/outcome.ts';
import type { RouteResult } from './response.ts';
import { problemResult, statusOf, type Problem } from './error-status.ts';
import type { RouteInput } from './http-handler.ts';
import {
  frozen,
  idempotentRequest,
  storeAnswer,
  type Idempotent,
  type IdempotentRequest,
  type Refusal,
  type StoredResponse,
} from '#app/idempotent-commit.ts';
import { IDEMPOTENCY_HEADER, parseIdempotencyKey } from '#domain/idempotency.ts';

/** The request's Idempotency-Key, or the refusal of a missing or malformed one. */
function idempotencyKeyOf(headers: Record<string, string>): string | Refused {
  const parsed = parseIdempotencyKey(headers[IDEMPOTENCY_HEADER.toLowerCase()]);
  if (parsed.ok) return parsed.key;
  const code = parsed.reason === 'missing' ? 'idempotency_key_required' : 'validation_failed';
  return refused(code, parsed.message, IDEMPOTENCY_HEADER);
}

/** On every answer that is a replay of an earlier one (Stripe's name for it). */
const REPLAYED_HEADER = 'Idempotent-Replayed';

const thaw = (stored: StoredResponse): RouteResult => ({
  status: stored.status,
  body: JSON.parse(stored.body) as unknown,
});
/**
 * Answers about the request itself are stored; failures of ours (5xx) are not, so a retry runs
 * again, and neither is an answer about the moment that tells the client to come back
 * (`Retry-After`: a write refused because other writes of its record kept winning, 429
 * `resource_busy`), or its retry would be answered the refusal again for 24 hours.
 */
const storable = (problem: Problem): boolean => statusOf(problem.code) < 500 && problem.retryAfterSeconds === undefined;

function refusal(ctx: RequestContext, outcome: Refusal): RouteResult {
  switch (outcome.kind) {
    case 'replay':
      ctx.log.idempotency_replay = true;
      // The same bytes as the first answer; the header tells a client this one changed nothing.
      return { ...thaw(outcome.response), headers: { [REPLAYED_HEADER]: 'true' } };
    case 'reused':
      return problemResult(
        refused(
          'idempotency_key_reused',
          `This ${IDEMPOTENCY_HEADER} was already used for a different request.`,
          IDEMPOTENCY_HEADER,
        ),
      );
    case 'in_progress':
      return problemResult(
        refused(
          'idempotency_in_progress',
          `A request with this ${IDEMPOTENCY_HEADER} is still being processed; retry shortly.`,
          IDEMPOTENCY_HEADER,
          1,
        ),
      );
  }
}

/**
 * An endpoint that takes an Idempotency-Key (docs/contract.md#idempotency), as one wrapper:
 *
 *   idempotent(ctx, input, { precheck: () => validate(Body, input.body), run: (request, body) => useCase(..., request) });
 *
 * `precheck` (optional) is pure validation; the refusal it returns is stored at once with one
 * conditional PutItem. `run` calls the use case with the `IdempotentRequest`; the use case checks the record
 * and commits its answer with its change (shared/app/idempotent-commit.ts) and returns an
 * outcome, which this maps to a response: its answer, a replay, 422 for a reused key, 409 while a
 * twin is in progress. An answer the use case did not store (it changed nothing), and a refusal
 * it returns, are stored with one conditional PutItem. Nothing is stored for a failure of ours (a
 * thrown fault, 5xx) or a refusal with Retry-After, so the client's retry runs again.
 *
 * Replays are byte for byte: what is sent is always the stored string parsed back, so the first
 * answer and every replay are the same bytes. Response headers other than Content-Type are not
 * part of the stored answer.
 */
export async function idempotent<T>(
  ctx: RequestContext,
  input: RouteInput,
  steps: {
    precheck?: () => T | Refused;
    /** A refusal it returns (as `precheck`'s) is stored when it is about the request. */
    run: (request: IdempotentRequest, checked: T) => Promise<Idempotent<unknown> | Refused>;
    /** Request headers that are part of the request besides its body (a conditional route's If-Match). */
    fingerprinted?: Record<string, string>;
  },
): Promise<RouteResult> {
  const key = idempotencyKeyOf(input.headers);
  if (isRefused(key)) return problemResult(key);
  const request = idempotentRequest(
    { keyId: input.principal.keyId, method: input.method, path: input.path, key },
    input.body,
    steps.fingerprinted,
  );
  const store = async (result: RouteResult): Promise<RouteResult> => {
    const response = frozen(result);
    const stored = await storeAnswer(ctx, request, response);
    return stored.kind === 'stored' ? thaw(response) : refusal(ctx, stored);
  };
  const refusedAnswer = (outcome: Refused) =>
    storable(outcome) ? store(problemResult(outcome)) : problemResult(outcome);

  const checked = steps.precheck ? steps.precheck() : (undefined as T);
  if (isRefused(checked)) return refusedAnswer(checked);
  const outcome = await steps.run(request, checked);
  if (isRefused(outcome)) return refusedAnswer(outcome);
  if (outcome.kind !== 'answered') return refusal(ctx, outcome);
  return outcome.stored ? thaw(outcome.stored) : store({ body: outcome.answer });
}
