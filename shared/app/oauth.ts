import { requireStore } from '#app/stores.ts';
import { getClient, keepClient, putClient } from '#db/oauth/client.repo.ts';
import { takePlace } from '#db/oauth/limit.repo.ts';
import { limitWindow, type OAuthLimits, secondsLeftInWindow } from '#domain/oauth/bounds.ts';
import {
  approveRequest,
  denyRequest,
  getRequest,
  listPendingRequests,
  putRequest,
  type RequestPage,
  redeemRequest,
  type PendingRequest,
} from '#db/oauth/request.repo.ts';
import { getCode, getRefresh, issueTokens, type RefreshRecord, type Spent } from '#db/oauth/token.repo.ts';

/** What the authorize page shows of a request; the page imports it from here, not from storage. */
export type { PendingRequest } from '#db/oauth/request.repo.ts';
import { revokeKey } from '#db/key/change.repo.ts';
import { getKey } from '#db/key/repo.ts';
import { DomainError } from '#domain/errors.ts';
import {
  type Caller as SeenCaller,
  cleanCaller,
  cleanClientName,
  nameVerifiedBy,
  sameDigest,
} from '#domain/oauth/approval.ts';
import type { Ability } from '#domain/key/abilities.ts';
import { generateToken, generateWebhookSecret, hashToken, type McpMode } from '#domain/key/api-key.ts';
import {
  ACCESS_TOKEN_SECONDS,
  checkClientMetadata,
  CLIENT_SECONDS,
  CODE_SECONDS,
  generateAccessToken,
  generateApprovalCode,
  generateClientId,
  generateCode,
  generateRefreshToken,
  generateRequestSecret,
  isS256Challenge,
  looksLikeSecret,
  normalizeApprovalCode,
  openPair,
  parseScope,
  pkceMatches,
  REFRESH_GRACE_SECONDS,
  REFRESH_TOKEN_SECONDS,
  REQUEST_SECONDS,
  redirectTarget,
  redirectUriMatches,
  requestedResource,
  resourceWithin,
  sealPair,
  UNUSED_CLIENT_SECONDS,
  type ClientCheck,
  type IssuedPair,
  type OAuthClient,
} from '#domain/oauth/oauth.ts';

/**
 * The authorization server's use cases (docs/oauth.md): registration, the authorization request
 * and its waiting page, the store admin's decision, and the token endpoint. Outcomes are tagged
 * unions; the handler maps them to pages, redirects and RFC 6749 error bodies.
 */

/** Fetches a Client ID Metadata Document under the webhook URL rules (functions/oauth/client-metadata.ts). */
export type FetchClientMetadata = (clientId: string) => Promise<ClientCheck>;

/**
 * Who calls a public OAuth endpoint: as the gateway saw it (address and User-Agent, shown to the
 * store admin beside a request) and the bounds that apply to it (docs/oauth.md#bounds).
 */
export interface Caller extends SeenCaller {
  limits: OAuthLimits;
}

/** The caller is over a bound: nothing was stored; it may try again after `retryAfterSeconds`. */
export interface Limited {
  kind: 'limited';
  description: string;
  retryAfterSeconds: number;
}

/** Takes the caller's place in the window's count of `scope`, or answers why not. */
async function withinBound(scope: string, max: number, what: string, nowMs: number): Promise<Limited | undefined> {
  if (await takePlace(scope, limitWindow(nowMs), max)) return undefined;
  const retryAfterSeconds = secondsLeftInWindow(nowMs);
  return { kind: 'limited', description: `${what}; retry after ${retryAfterSeconds} s`, retryAfterSeconds };
}

export type RegisterOutcome =
  | { kind: 'registered'; client: OAuthClient }
  | { kind: 'invalid'; reason: string }
  | Limited;

/**
 * RFC 7591 registration. Every attempt counts against the caller's IP, valid or not; a client is
 * kept a day until it gets a token (exchangeCode keeps it longer).
 */
export async function registerClient(body: unknown, nowMs: number, caller: Caller): Promise<RegisterOutcome> {
  const limited = await withinBound(
    `register#${caller.ip ?? 'unknown'}`,
    caller.limits.registrationsPerIp,
    `more than ${caller.limits.registrationsPerIp} registrations from this address in 10 minutes`,
    nowMs,
  );
  if (limited) return limited;
  const checked = checkClientMetadata(body, generateClientId());
  if (!checked.ok) return { kind: 'invalid', reason: checked.reason };
  await putClient(checked.client, nowMs, UNUSED_CLIENT_SECONDS);
  return { kind: 'registered', client: checked.client };
}

const isUrlClientId = (clientId: string) => /^https?:\/\//.test(clientId);

async function resolveClient(
  clientId: string,
  nowMs: number,
  fetchMetadata: FetchClientMetadata,
): Promise<ClientCheck> {
  if (isUrlClientId(clientId)) return fetchMetadata(clientId);
  const client = /^oc_[0-9a-f]{32}$/.test(clientId) ? await getClient(clientId, nowMs) : undefined;
  return client ? { ok: true, client } : { ok: false, reason: 'client_id is not a registered client' };
}

export type AuthorizeOutcome =
  /** Shown on the page itself: nothing may be sent to a redirect URI that is not verified. */
  | { kind: 'refused'; message: string }
  /** RFC 6749 §4.1.2.1: back to the verified redirect URI with `error`. */
  | { kind: 'redirect'; url: string }
  | { kind: 'waiting'; request: PendingRequest; handle: string; redirectHost: string }
  /** Over a bound (docs/oauth.md#bounds), before anything was fetched or stored. */
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
  query: Record<string, string | undefined>,
  issuer: string,
  /** The API's base path: the resources are `{issuer}{basePath}` and its MCP endpoint. */
  basePath: string,
  nowMs: number,
  fetchMetadata: FetchClientMetadata,
  caller: Caller,
): Promise<AuthorizeOutcome> {
  // Before the client's metadata document is fetched: a flood must not make this server fetch.
  const limited = await withinBound(
    `authorize#${caller.ip ?? 'unknown'}`,
    caller.limits.authorizationsPerIp,
    `more than ${caller.limits.authorizationsPerIp} authorization requests from this address in 10 minutes`,
    nowMs,
  );
  if (limited) return limited;
  const clientId = query.client_id;
  if (!clientId) return { kind: 'refused', message: 'client_id is required.' };
  const client = await resolveClient(clientId, nowMs, fetchMetadata);
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
  const crowded = await withinBound(
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
    if (await putRequest(request))
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
export async function pollAuthorization(handle: string, issuer: string, nowMs: number): Promise<PollOutcome> {
  const [typed, secret] = handle.split('.');
  const approvalCode = normalizeApprovalCode(typed ?? '');
  if (!approvalCode || !secret || !looksLikeSecret('sis_', secret)) return { status: 'unknown' };
  const request = await getRequest(approvalCode);
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

export interface ApproveInput {
  code: string;
  storeId: string;
  abilities: Ability[] | undefined;
  mcp: McpMode;
  writesPerHour: number | null;
}

async function requirePending(code: string, nowMs: number): Promise<PendingRequest> {
  const approvalCode = normalizeApprovalCode(code);
  const request = approvalCode ? await getRequest(approvalCode) : undefined;
  if (!request) throw new DomainError('not_found', `no authorization request has the approval code ${code}`, 'code');
  if (request.status !== 'pending' || request.expires_at <= nowMs)
    throw new DomainError(
      'invalid_transition',
      `the request ${request.approval_code} is ${request.status === 'pending' ? 'expired' : request.status}`,
      'code',
    );
  return request;
}

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
export async function showAuthorization(code: string, nowMs: number) {
  const approvalCode = normalizeApprovalCode(code);
  const request = approvalCode ? await getRequest(approvalCode) : undefined;
  if (!request) throw new DomainError('not_found', `no authorization request has the approval code ${code}`, 'code');
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
export async function listAuthorizationRequests(nowMs: number, page: RequestPage = { limit: 50, cursor: null }) {
  const { requests: pending, nextCursor } = await listPendingRequests(nowMs, page);
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
export async function approveAuthorization(input: ApproveInput, nowMs: number) {
  const request = await requirePending(input.code, nowMs);
  const abilities = input.abilities ?? request.abilities;
  const wider = abilities.filter((a) => !request.abilities.includes(a));
  if (wider.length > 0)
    throw new DomainError(
      'validation_failed',
      `the client did not ask for ${wider.join(', ')} (it asked for ${request.abilities.join(', ')})`,
      'abilities',
    );
  if (abilities.length === 0)
    throw new DomainError('validation_failed', 'at least one ability is required', 'abilities');
  const store = await requireStore(input.storeId);
  const keyId = await approveRequest(
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
  if (keyId === undefined)
    throw new DomainError('invalid_transition', `the request ${request.approval_code} was decided meanwhile`, 'code');
  return { approval_code: request.approval_code, client_id: request.client_id, key_id: keyId, abilities };
}

export async function denyAuthorization(code: string, nowMs: number) {
  const request = await requirePending(code, nowMs);
  if (!(await denyRequest(request.approval_code, nowMs)))
    throw new DomainError('invalid_transition', `the request ${request.approval_code} was decided meanwhile`, 'code');
  return { approval_code: request.approval_code, client_id: request.client_id, status: 'denied' };
}

/** The token endpoint's answers (RFC 6749 §5.1, §5.2). */
export type TokenOutcome =
  | { ok: true; body: Record<string, unknown> }
  | { ok: false; error: 'invalid_request' | 'invalid_grant' | 'unsupported_grant_type'; description: string }
  /** Parallel requests kept cancelling each other's transaction: nothing was spent, try again. */
  | { ok: false; error: 'temporarily_unavailable'; description: string; retryAfterSeconds: number };

const invalidGrant = (description: string): TokenOutcome => ({ ok: false, error: 'invalid_grant', description });

/** Rounds of read-and-issue before a contended token request gives up (temporarily_unavailable). */
const ISSUE_ROUNDS = 5;
const busy: TokenOutcome = {
  ok: false,
  error: 'temporarily_unavailable',
  description: 'parallel requests with the same grant conflicted; nothing was spent, try again',
  retryAfterSeconds: 1,
};
/** A few milliseconds, jittered, so that requests that just collided do not collide again. */
const backOff = (round: number) =>
  new Promise((resolve) => setTimeout(resolve, (round + 1) * (5 + Math.random() * 20)));

/**
 * The token endpoint. `issuer` and `basePath` name the server's resources: a token request may
 * name the grant's resource or the MCP endpoint under it (none: the grant's).
 */
export async function exchangeToken(
  form: Record<string, string | undefined>,
  issuer: string,
  basePath: string,
  nowMs: number,
): Promise<TokenOutcome> {
  if (form.grant_type === 'authorization_code') return exchangeCode(form, issuer, basePath, nowMs);
  if (form.grant_type === 'refresh_token') return refreshTokens(form, issuer, basePath, nowMs);
  return {
    ok: false,
    error: 'unsupported_grant_type',
    description: 'grant_type must be authorization_code or refresh_token',
  };
}

async function exchangeCode(
  form: Record<string, string | undefined>,
  issuer: string,
  basePath: string,
  nowMs: number,
): Promise<TokenOutcome> {
  const { code, code_verifier: verifier, redirect_uri: redirectUri, client_id: clientId } = form;
  if (!code || !verifier || !redirectUri || !clientId)
    return {
      ok: false,
      error: 'invalid_request',
      description: 'code, code_verifier, redirect_uri and client_id are required',
    };
  const codeHash = hashToken(code);
  const grant = looksLikeSecret('sic_', code) ? await getCode(codeHash) : undefined;
  if (grant?.used) {
    // A code comes back after its exchange: it leaked, or was intercepted. The grant ends with
    // every token issued from it (OAuth 2.1 §4.1.3), whoever presents it.
    await revokeKey(grant.key_id, new Date(nowMs).toISOString());
    return invalidGrant('the code was already used; the tokens issued from it are revoked');
  }
  const target = grant && resourceWithin(issuer, basePath, grant, form.resource);
  // One answer for every mismatch: the code tells its holder nothing about why. The redirect URI
  // is the very one of the authorization request (a loopback port included), not any registered one.
  if (
    !grant ||
    !target ||
    grant.expires_at <= nowMs ||
    grant.client_id !== clientId ||
    grant.redirect_uri !== redirectUri ||
    !pkceMatches(verifier, grant.code_challenge)
  )
    return invalidGrant(
      'the code is unknown, used, expired, or was issued for another client, redirect URI, resource or verifier',
    );
  // A client that gets a token keeps its registration (an unused one goes after a day). Before
  // the tokens are issued: a store fault here must not answer a 503 for a code already spent.
  if (!isUrlClientId(clientId)) await keepClient(clientId, nowMs, nowMs + CLIENT_SECONDS * 1000);
  const spent: Spent = { code: codeHash, keepUntilMs: nowMs + REFRESH_TOKEN_SECONDS * 1000 };
  for (let round = 0; round < ISSUE_ROUNDS; round++) {
    const out = await issue(grant.key_id, () => spent, grant, target.audience, nowMs);
    if (out.ok) return out;
    // A parallel exchange of the same code won: this one is refused without revoking (the same
    // client double-submitting is no leak); a code presented after its exchange revokes, above.
    if (out.reason === 'spent') return invalidGrant('the code was already used');
    if (out.reason === 'revoked') return invalidGrant('the grant is revoked');
    await backOff(round);
  }
  return busy;
}

async function refreshTokens(
  form: Record<string, string | undefined>,
  issuer: string,
  basePath: string,
  nowMs: number,
): Promise<TokenOutcome> {
  const token = form.refresh_token;
  if (!token || !form.client_id)
    return { ok: false, error: 'invalid_request', description: 'refresh_token and client_id are required' };
  const hash = hashToken(token);
  if (!looksLikeSecret('sir_', token))
    return invalidGrant('the refresh token is unknown, expired or was issued to another client');
  for (let round = 0; round < ISSUE_ROUNDS; round++) {
    const refresh = await getRefresh(hash);
    if (!refresh || refresh.client_id !== form.client_id || refresh.expires_at <= nowMs)
      return invalidGrant('the refresh token is unknown, expired or was issued to another client');
    if (refresh.status === 'used') return refreshedAlready(refresh, token, form.resource, issuer, basePath, nowMs);
    const target = resourceWithin(issuer, basePath, refresh, form.resource);
    if (!target) return invalidGrant('the refresh token was issued for another resource');
    const out = await issue(
      refresh.key_id,
      (pair) => ({ refresh: hash, rotatedAtMs: nowMs, successor: sealPair(token, pair) }),
      refresh,
      target.audience,
      nowMs,
    );
    if (out.ok) return out;
    if (out.reason === 'revoked') return invalidGrant('the grant is revoked');
    // Spent or conflicted: a parallel refresh with the same token may have rotated it. Read it
    // again: used, it answers that refresh's pair; still active, this one tries again.
    if (out.reason === 'conflict') await backOff(round);
  }
  return busy;
}

/** How many rotations a late refresh follows to the grant's current pair. */
const GRACE_HOPS = 5;

/**
 * A refresh token that was already rotated. Within the grace window it answers the pair it was
 * rotated to, so that a client refreshing from two calls at once keeps its grant (the same pair
 * for every one of them: the client keeps whichever it stores last). If that pair was itself
 * rotated meanwhile, the answer follows it to the current pair (each successor is sealed under its
 * predecessor): a late answer holding a rotated-away refresh token would revoke the grant on the
 * client's next refresh. After the window it is a reuse: it leaked, or the client lost track, and
 * the grant ends (OAuth 2.1 §4.3.1) with every token it has.
 */
async function refreshedAlready(
  refresh: RefreshRecord,
  token: string,
  resource: string | undefined,
  issuer: string,
  basePath: string,
  nowMs: number,
): Promise<TokenOutcome> {
  const inGrace = refresh.rotated_at !== null && nowMs < refresh.rotated_at + REFRESH_GRACE_SECONDS * 1000;
  const first = inGrace && refresh.successor !== null ? openPair(token, refresh.successor) : undefined;
  if (!first) {
    await revokeKey(refresh.key_id, new Date(nowMs).toISOString());
    return invalidGrant('the refresh token was already used; the grant is revoked');
  }
  if (!resourceWithin(issuer, basePath, refresh, resource))
    return invalidGrant('the refresh token was issued for another resource');
  let pair: IssuedPair = first;
  for (let hop = 0; hop < GRACE_HOPS; hop++) {
    const next = await getRefresh(hashToken(pair.refresh_token));
    const later: IssuedPair | undefined =
      next?.status === 'used' && next.successor !== null ? openPair(pair.refresh_token, next.successor) : undefined;
    if (!later) break;
    pair = later;
  }
  const key = await getKey(refresh.key_id);
  if (key?.status !== 'active') return invalidGrant('the grant is revoked');
  return { ok: true, body: tokenBody(pair, key.abilities, nowMs) };
}

const tokenBody = (pair: IssuedPair, abilities: readonly string[], nowMs: number) => ({
  access_token: pair.access_token,
  token_type: 'Bearer',
  expires_in: Math.max(1, Math.round((pair.access_expires_at - nowMs) / 1000)),
  refresh_token: pair.refresh_token,
  scope: abilities.join(' '),
});

type IssueOutcome =
  | { ok: true; body: Record<string, unknown> }
  | { ok: false; reason: 'revoked' | 'spent' | 'conflict' };

/** A new access and refresh token for the grant, spending what was presented (`spend`, given the new pair). */
async function issue(
  keyId: number,
  spend: (pair: IssuedPair) => Spent,
  from: { client_id: string; resource: string; audience: string },
  accessAudience: string,
  nowMs: number,
): Promise<IssueOutcome> {
  const pair: IssuedPair = {
    access_token: generateAccessToken(),
    refresh_token: generateRefreshToken(),
    access_expires_at: nowMs + ACCESS_TOKEN_SECONDS * 1000,
  };
  const key = await getKey(keyId);
  if (key?.status !== 'active') return { ok: false, reason: 'revoked' };
  const store = await requireStore(key.store_id);
  const issued = await issueTokens(keyId, spend(pair), {
    accessHash: hashToken(pair.access_token),
    accessExpiresAt: pair.access_expires_at,
    accessAudience,
    refreshHash: hashToken(pair.refresh_token),
    // The refresh token keeps the grant's resource, whatever this access token was narrowed to.
    refresh: {
      key_id: keyId,
      client_id: from.client_id,
      resource: from.resource,
      audience: from.audience,
      expires_at: nowMs + REFRESH_TOKEN_SECONDS * 1000,
    },
    currency: store.currency_code,
  });
  if (!issued.ok) return issued;
  return { ok: true, body: tokenBody(pair, key.abilities, nowMs) };
}

export type { OAuthClient };
