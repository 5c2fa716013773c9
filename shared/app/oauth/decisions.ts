import type { RequestContext } from '#shared/context.ts';
import { requireStore } from '#app/stores.ts';
import {
  approveRequest,
  denyRequest,
  getRequest,
  listPendingRequests,
  type PendingRequest,
  type RequestPage,
} from '#db/oauth/request.repo.ts';
import type { Ability } from '#domain/key/abilities.ts';
import type { McpMode } from '#domain/key/api-key.ts';
import { nameVerifiedBy } from '#domain/oauth/approval.ts';
import { normalizeApprovalCode, redirectTarget } from '#domain/oauth/oauth.ts';
import { isRefused, refused, type Refused } from '#domain/outcome.ts';

/**
 * The store admin's side of an authorization request (`oauth requests`, `oauth show`, `oauth
 * approve`, `oauth deny`, and the console's *Approve an app* page): what is shown of a request,
 * and the decision on it. An approval decides the grant; the key is written when the app's page
 * picks the approval up (./authorize.ts `pollAuthorization`). What the admin can get wrong (a code
 * no request has, a request decided or expired, abilities wider than asked, a store that is not
 * there) is answered as a refusal naming the argument at fault (shared/domain/outcome.ts), which
 * the admin Lambda presents (functions/admin/handler.ts).
 */

export interface ApproveInput {
  code: string;
  storeId: string;
  abilities: Ability[] | undefined;
  mcp: McpMode;
  writesPerHour: number | null;
}

/** The request of an approval code as the admin typed it, or 404 naming `code`. */
async function requestOf(ctx: RequestContext, code: string): Promise<PendingRequest | Refused> {
  const approvalCode = normalizeApprovalCode(code);
  const request = approvalCode ? await getRequest(ctx, approvalCode) : undefined;
  return request ?? refused('not_found', `no authorization request has the approval code ${code}`, 'code');
}

/** A request that can still be decided: pending and not expired; otherwise 409 naming `code`. */
async function requirePending(ctx: RequestContext, code: string, nowMs: number): Promise<PendingRequest | Refused> {
  const request = await requestOf(ctx, code);
  if (isRefused(request) || (request.status === 'pending' && request.expires_at > nowMs)) return request;
  return refused(
    'invalid_transition',
    `the request ${request.approval_code} is ${request.status === 'pending' ? 'expired' : request.status}`,
    'code',
  );
}

/** Another decision committed between this one's read and its write. */
const decidedMeanwhile = (request: PendingRequest) =>
  refused('invalid_transition', `the request ${request.approval_code} was decided meanwhile`, 'code');

/**
 * What the store admin is shown of a request (`oauth show`, `oauth requests`, the console): who
 * asks and whether anyone vouches for that name (`name_verified_by`: the host serving its Client
 * ID Metadata Document; null: the client registered itself, any caller can use any name), who
 * opened the page (IP and User-Agent, as the gateway saw them), when, where the code would go and
 * what it asks for. Never the PKCE challenge, the page's secret, the state or the full redirect URI.
 */
function requestView(r: PendingRequest, nowMs: number) {
  const verifiedBy = nameVerifiedBy(r.client_id);
  return {
    client_id: r.client_id,
    client_name: r.client_name,
    name_verified: verifiedBy !== null,
    name_verified_by: verifiedBy,
    redirect_host: redirectTarget(r.redirect_uri),
    abilities: r.abilities,
    ip: r.caller_ip,
    user_agent: r.caller_user_agent,
    created_at: new Date(r.created_at).toISOString(),
    age_seconds: Math.max(0, Math.floor((nowMs - r.created_at) / 1000)),
    expires_at: new Date(r.expires_at).toISOString(),
  };
}

/**
 * One request by the approval code the user reads out from their own screen (`oauth show`, the
 * console's *Approve an app* page): what the store admin decides on, and whether it can still be
 * decided.
 */
export async function showAuthorization(ctx: RequestContext, code: string, nowMs: number) {
  const request = await requestOf(ctx, code);
  if (isRefused(request)) return request;
  const expired = (request.status === 'pending' || request.status === 'approved') && request.expires_at <= nowMs;
  return {
    approval_code: request.approval_code,
    ...requestView(request, nowMs),
    resource: request.resource,
    status: expired ? 'expired' : request.status,
  };
}

/**
 * The requests waiting for the store admin, newest first (`oauth requests`, the console's *Approve
 * an app* page): an overview of who is asking, not a way to approve. It carries no approval code:
 * anyone can start a request that looks like a real app's (same name, same redirect host), and
 * only the code the user reads out from their own screen tells the admin which request is theirs
 * (docs/oauth.md#approving-safely).
 */
export async function listAuthorizationRequests(
  ctx: RequestContext,
  nowMs: number,
  page: RequestPage = { limit: 50, cursor: null },
) {
  const { requests: pending, nextCursor } = await listPendingRequests(ctx, nowMs, page);
  return {
    next_cursor: nextCursor,
    data: pending.map((r) => requestView(r, nowMs)),
    approve_with:
      'oauth approve --code CODE, with the approval code the user reads out from the page on their own screen; this list shows no codes',
  };
}

/**
 * The store admin's approval (`oauth approve`), never wider than asked. It decides the grant: a
 * key of the chosen store, written when the app's page picks the approval up (pollAuthorization);
 * `key_id` is the id that key will have.
 */
export async function approveAuthorization(ctx: RequestContext, input: ApproveInput, nowMs: number) {
  const request = await requirePending(ctx, input.code, nowMs);
  if (isRefused(request)) return request;
  const abilities = input.abilities ?? request.abilities;
  const wider = abilities.filter((a) => !request.abilities.includes(a));
  if (wider.length > 0)
    return refused(
      'validation_failed',
      `the client did not ask for ${wider.join(', ')} (it asked for ${request.abilities.join(', ')})`,
      'abilities',
    );
  if (abilities.length === 0) return refused('validation_failed', 'at least one ability is required', 'abilities');
  const store = await requireStore(ctx, input.storeId);
  if (isRefused(store)) return store;
  const keyId = await approveRequest(
    ctx,
    request.approval_code,
    {
      store_id: store.id,
      currency: store.currency_code,
      name: `oauth: ${request.client_name}`,
      abilities,
      mcp: input.mcp,
      writes_per_hour: input.writesPerHour,
      status_changes_per_hour: null,
    },
    nowMs,
  );
  if (keyId === undefined) return decidedMeanwhile(request);
  return { approval_code: request.approval_code, client_id: request.client_id, key_id: keyId, abilities };
}

export async function denyAuthorization(ctx: RequestContext, code: string, nowMs: number) {
  const request = await requirePending(ctx, code, nowMs);
  if (isRefused(request)) return request;
  if (!(await denyRequest(ctx, request.approval_code, nowMs))) return decidedMeanwhile(request);
  return { approval_code: request.approval_code, client_id: request.client_id, status: 'denied' };
}
