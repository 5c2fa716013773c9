import type { RequestContext } from '#shared/context.ts';
import { getRequest, type PendingRequest, putRequest, redeemRequest } from '#db/oauth/request.repo.ts';
import { cleanCaller, cleanClientName, sameDigest } from '#domain/oauth/approval.ts';
import { generateToken, generateWebhookSecret, hashToken } from '#domain/key/api-key.ts';
import {
  CODE_SECONDS,
  generateApprovalCode,
  generateCode,
  generateRequestSecret,
  isS256Challenge,
  looksLikeSecret,
  normalizeApprovalCode,
  parseScope,
  REQUEST_SECONDS,
  redirectTarget,
  redirectUriMatches,
  requestedResource,
} from '#domain/oauth/oauth.ts';
import { type Caller, type Limited, claimPlace } from './caller.ts';
import { type FetchClientMetadata, resolveClient } from './register.ts';

/**
 * The authorization request (docs/oauth.md#the-flow): the authorize page stores it for the store
 * admin and shows the user its approval code, and the page's poll picks up the admin's decision,
 * redeeming an approval for an authorization code.
 */

/** What the authorize page shows of a request; the page imports it from here, not from storage. */
export type { PendingRequest } from '#db/oauth/request.repo.ts';

export type AuthorizeOutcome =
  /** Shown on the page itself: nothing may be sent to a redirect URI that is not verified. */
  | { kind: 'refused'; message: string }
  /** RFC 6749 §4.1.2.1: back to the verified redirect URI with `error`. */
  | { kind: 'redirect'; url: string }
  | { kind: 'waiting'; request: PendingRequest; handle: string; redirectHost: string }
  /** Over a bound (docs/oauth.md#bounds): no request was stored. */
  | Limited;

/** Where the client goes, with RFC 9207's `iss` and the client's `state`. */
function redirectTo(redirectUri: string, params: Record<string, string>, state: string | null, issuer: string) {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  if (state !== null) url.searchParams.set('state', state);
  url.searchParams.set('iss', issuer);
  return url.href;
}

export async function startAuthorization(
  ctx: RequestContext,
  query: Record<string, string | undefined>,
  issuer: string,
  /** The API's base path: the resources are `{issuer}{basePath}` and its MCP endpoint. */
  basePath: string,
  nowMs: number,
  fetchMetadata: FetchClientMetadata,
  caller: Caller,
): Promise<AuthorizeOutcome> {
  // Before the client's metadata document is fetched: a flood must not make this server fetch.
  const limited = await claimPlace(
    ctx,
    `authorize#${caller.ip ?? 'unknown'}`,
    caller.limits.authorizationsPerIp,
    `more than ${caller.limits.authorizationsPerIp} authorization requests from this address in 10 minutes`,
    nowMs,
  );
  if (limited) return limited;
  const clientId = query.client_id;
  if (!clientId) return { kind: 'refused', message: 'client_id is required.' };
  const client = await resolveClient(ctx, clientId, nowMs, fetchMetadata);
  if (!client.ok) return { kind: 'refused', message: `The client cannot be used: ${client.reason}.` };
  const redirectUri = query.redirect_uri;
  // Exact, character for character (OAuth 2.1 §2.3.1), but for a loopback URI's port (RFC 8252 §7.3).
  if (!redirectUri || !client.client.redirect_uris.some((registered) => redirectUriMatches(registered, redirectUri)))
    return { kind: 'refused', message: 'redirect_uri is not one of the client’s redirect URIs.' };
  const state = query.state ?? null;
  const fail = (error: string, description: string): AuthorizeOutcome => ({
    kind: 'redirect',
    url: redirectTo(redirectUri, { error, error_description: description }, state, issuer),
  });
  if (query.response_type !== 'code') return fail('unsupported_response_type', 'response_type must be code');
  if (query.code_challenge_method !== 'S256' || !query.code_challenge || !isS256Challenge(query.code_challenge))
    return fail('invalid_request', 'a PKCE code_challenge with code_challenge_method S256 is required');
  const target = requestedResource(issuer, basePath, query.resource);
  if (!target) return fail('invalid_target', 'resource must be this API or its MCP endpoint');
  const abilities = parseScope(query.scope);
  if (!abilities) return fail('invalid_scope', 'scope must name abilities of this API');
  // Only a request that would be stored counts against everyone's: what the admin's list can hold.
  const crowded = await claimPlace(
    ctx,
    'pending',
    caller.limits.pendingRequests,
    'too many authorization requests are waiting for the store admin',
    nowMs,
  );
  if (crowded) return crowded;
  const handleSecret = generateRequestSecret();
  const seen = cleanCaller(caller);
  for (let attempt = 0; attempt < 5; attempt++) {
    const request: PendingRequest = {
      approval_code: generateApprovalCode(),
      secret_hash: hashToken(handleSecret),
      client_id: client.client.client_id,
      // Cleaned again: a registration stored before names were cleaned lives 90 days.
      client_name: cleanClientName(client.client.client_name, client.client.client_id),
      redirect_uri: redirectUri,
      code_challenge: query.code_challenge,
      state,
      resource: target.resource,
      audience: target.audience,
      abilities,
      status: 'pending',
      key_id: null,
      grant: null,
      created_at: nowMs,
      caller_ip: seen.ip,
      caller_user_agent: seen.userAgent,
      expires_at: nowMs + REQUEST_SECONDS * 1000,
    };
    if (await putRequest(ctx, request))
      return {
        kind: 'waiting',
        request,
        handle: `${request.approval_code}.${handleSecret}`,
        redirectHost: redirectTarget(redirectUri),
      };
  }
  throw new Error('no free approval code after 5 draws');
}

export type PollOutcome = { status: 'pending' } | { status: 'done'; redirect: string } | { status: 'unknown' };

/**
 * The waiting page's poll: only the page that holds the request's secret learns its code. An
 * approval is redeemed here, before the request expires: the code and the grant's key are written
 * together (request.repo.ts `redeemRequest`), so an approval the page never picks up leaves no key.
 */
export async function pollAuthorization(
  ctx: RequestContext,
  handle: string,
  issuer: string,
  nowMs: number,
): Promise<PollOutcome> {
  const [typed, secret] = handle.split('.');
  const approvalCode = normalizeApprovalCode(typed ?? '');
  if (!approvalCode || !secret || !looksLikeSecret('sis_', secret)) return { status: 'unknown' };
  const request = await getRequest(ctx, approvalCode);
  if (!request || !sameDigest(request.secret_hash, hashToken(secret))) return { status: 'unknown' };
  const back = (params: Record<string, string>) => ({
    status: 'done' as const,
    redirect: redirectTo(request.redirect_uri, params, request.state, issuer),
  });
  if (request.status === 'denied') return back({ error: 'access_denied', error_description: 'the store admin denied' });
  // Past its expiry a request is over, decided or not, whether or not the TTL sweep removed it yet.
  if ((request.status === 'pending' || request.status === 'approved') && request.expires_at <= nowMs)
    return back({ error: 'access_denied', error_description: 'expired' });
  if (request.status === 'pending') return { status: 'pending' };
  if (request.status !== 'approved' || request.key_id === null || request.grant === null) return { status: 'unknown' };
  const code = generateCode();
  const redeemed = await redeemRequest(
    ctx,
    { ...request, key_id: request.key_id, grant: request.grant },
    hashToken(code),
    {
      key_id: request.key_id,
      client_id: request.client_id,
      redirect_uri: request.redirect_uri,
      code_challenge: request.code_challenge,
      resource: request.resource,
      audience: request.audience,
      expires_at: nowMs + CODE_SECONDS * 1000,
    },
    {
      placeholderTokenHash: hashToken(generateToken()),
      webhookSecret: generateWebhookSecret(),
      now: new Date(nowMs).toISOString(),
    },
    nowMs,
  );
  return redeemed ? back({ code }) : { status: 'unknown' };
}
