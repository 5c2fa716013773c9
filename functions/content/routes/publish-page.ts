import type { RouteFn, RouteInput } from '../../../shared/http/http-handler.ts';
import type { RouteResult } from '../../../shared/http/response.ts';
import type { RequestPrincipal } from '../../../shared/http/authorizer-context.ts';
import { idempotent } from '../../../shared/http/idempotency.ts';
import { IDEMPOTENCY_HEADER } from '../../../shared/domain/idempotency.ts';
import { API_BASE_PATH } from '../../../shared/http/api-routes.ts';
import type { Principal } from '../../../shared/domain/principal.ts';
import { changePageStatus, checkAction } from './change-status.ts';
import { externalIdFromPathParameters } from '../input.ts';

export interface PublishRequest {
  /** The Idempotency-Key (header, or the tool's `idempotency_key` argument); required. */
  idempotencyKey: string | undefined;
  /** The body as sent: none and `{}` are the same request. */
  body?: unknown;
  /** Idempotency scope (CONTRACT §8: key + method + path + key); defaults to the canonical path. */
  path?: string;
  requestId?: string;
}

/** idempotent() reads only the key id of the principal; a tool call has no rate verdict to hand over. */
const NO_RATE = { limit: 0, remaining: 0, resetSeconds: 0, limited: false };

/**
 * POST /content/pages/{external_id}/publish and the MCP tool `publish_page`, under an
 * Idempotency-Key with the semantics of CONTRACT §8 (shared/http/idempotency.ts): draft or
 * unpublished → published (stamps published_at), published → 200 no-op, unknown → 404.
 *
 * Returns the response rather than throwing, because a replay may be a stored error: the
 * caller sends `status` and `body` as they are (a status ≥ 400 is an error document). Errors
 * about the request itself (missing key: 400 `idempotency_key_required`) are thrown as DomainError.
 */
export function publishPage(principal: Principal | RequestPrincipal, externalId: unknown, request: PublishRequest): Promise<RouteResult> {
  const input: RouteInput = {
    principal: { rate: NO_RATE, ...principal },
    pathParameters: { external_id: String(externalId ?? '') },
    query: {},
    body: request.body ?? {},
    headers: request.idempotencyKey === undefined ? {} : { [IDEMPOTENCY_HEADER.toLowerCase()]: request.idempotencyKey },
    requestId: request.requestId ?? '',
    url: '',
    method: 'POST',
    // External ids need no escaping in a path, so this is the path an HTTP client sends as well.
    path: request.path ?? `${API_BASE_PATH}/content/pages/${String(externalId ?? '')}/publish`,
  };
  return idempotent(input, {
    precheck: () => checkAction(externalId, input.body),
    run: async (session, xid) => ({ body: await changePageStatus(principal, xid, 'publish', session) }),
  });
}

export const publishPageRoute: RouteFn = (input) =>
  publishPage(input.principal, externalIdFromPathParameters(input.pathParameters), {
    idempotencyKey: input.headers[IDEMPOTENCY_HEADER.toLowerCase()],
    body: input.body,
    path: input.path,
    requestId: input.requestId,
  });
