import type { RequestContext } from '#shared/context.ts';
import { revokeKey } from '#app/key-changes.ts';
import { getKey } from '#db/key/repo.ts';
import { getStore } from '#db/store/repo.ts';
import { readGrantKey } from '#db/key/grant.repo.ts';
import type { KeepClient } from '#db/oauth/client.repo.ts';
import {
  getCode,
  getRefresh,
  issueTokens,
  type RefreshRecord,
  type Spent,
  type TokenIssue,
} from '#db/oauth/token.repo.ts';
import { hashToken } from '#domain/key/api-key.ts';
import {
  ACCESS_TOKEN_SECONDS,
  CLIENT_SECONDS,
  generateAccessToken,
  generateRefreshToken,
  type IssuedPair,
  looksLikeSecret,
  openPair,
  pkceMatches,
  REFRESH_GRACE_SECONDS,
  REFRESH_TOKEN_SECONDS,
  resourceWithin,
  sealPair,
} from '#domain/oauth/oauth.ts';
import { isUrlClientId } from '#domain/oauth/approval.ts';
import { backoff, CONTENDED_RETRY_AFTER_S } from '#app/contention.ts';

/**
 * The token endpoint (docs/oauth.md#tokens): an authorization code exchanged for the grant's
 * first access and refresh tokens, and a refresh token rotated for the next pair. Outcomes are
 * values; the handler answers them as RFC 6749 bodies.
 */

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
  retryAfterSeconds: CONTENDED_RETRY_AFTER_S,
};

/**
 * The token endpoint. `issuer` and `basePath` name the server's resources: a token request may
 * name the grant's resource or the MCP endpoint under it (none: the grant's).
 */
export async function exchangeToken(
  ctx: RequestContext,
  form: Record<string, string | undefined>,
  issuer: string,
  basePath: string,
  nowMs: number,
): Promise<TokenOutcome> {
  if (form.grant_type === 'authorization_code') return exchangeCode(ctx, form, issuer, basePath, nowMs);
  if (form.grant_type === 'refresh_token') return refreshTokens(ctx, form, issuer, basePath, nowMs);
  return {
    ok: false,
    error: 'unsupported_grant_type',
    description: 'grant_type must be authorization_code or refresh_token',
  };
}

async function exchangeCode(
  ctx: RequestContext,
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
  const grant = looksLikeSecret('sic_', code) ? await getCode(ctx, codeHash) : undefined;
  if (grant?.used) {
    // A code comes back after its exchange: it leaked, or was intercepted. The grant ends with
    // every token issued from it (OAuth 2.1 §4.1.3), whoever presents it.
    await revokeKey(ctx, grant.key_id, new Date(nowMs).toISOString());
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
  // A client that gets a token keeps its registration (an unused one goes after a day), in the
  // transaction that issues the tokens. A metadata document's client has nothing stored to keep.
  const keep = isUrlClientId(clientId) ? undefined : { clientId, nowMs, untilMs: nowMs + CLIENT_SECONDS * 1000 };
  const spent: Spent = { code: codeHash, keepUntilMs: nowMs + REFRESH_TOKEN_SECONDS * 1000 };
  for (let round = 0; round < ISSUE_ROUNDS; round++) {
    const out = await issue(ctx, grant.key_id, () => spent, grant, target.audience, nowMs, keep);
    if (out.ok) return out;
    // A parallel exchange of the same code won: this one is refused without revoking (the same
    // client double-submitting is no leak); a code presented after its exchange revokes, above.
    if (out.reason === 'spent') return invalidGrant('the code was already used');
    if (out.reason === 'revoked') return invalidGrant('the grant is revoked');
    await backoff(ctx, round);
  }
  return busy;
}

async function refreshTokens(
  ctx: RequestContext,
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
    const refresh = await getRefresh(ctx, hash, nowMs);
    if (!refresh || refresh.client_id !== form.client_id || refresh.expires_at <= nowMs)
      return invalidGrant('the refresh token is unknown, expired or was issued to another client');
    if (refresh.status === 'used') return refreshedAlready(ctx, refresh, token, form.resource, issuer, basePath, nowMs);
    const target = resourceWithin(issuer, basePath, refresh, form.resource);
    if (!target) return invalidGrant('the refresh token was issued for another resource');
    const out = await issue(
      ctx,
      refresh.key_id,
      (pair) => ({
        refresh: hash,
        rotatedAtMs: nowMs,
        successor: sealPair(token, pair),
        successorUntilMs: nowMs + REFRESH_GRACE_SECONDS * 1000,
      }),
      refresh,
      target.audience,
      nowMs,
    );
    if (out.ok) return out;
    if (out.reason === 'revoked') return invalidGrant('the grant is revoked');
    // Spent or conflicted: a parallel refresh with the same token may have rotated it. Read it
    // again: used, it answers that refresh's pair; still active, this one tries again.
    if (out.reason === 'conflict') await backoff(ctx, round);
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
  ctx: RequestContext,
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
    await revokeKey(ctx, refresh.key_id, new Date(nowMs).toISOString());
    return invalidGrant('the refresh token was already used; the grant is revoked');
  }
  if (!resourceWithin(issuer, basePath, refresh, resource))
    return invalidGrant('the refresh token was issued for another resource');
  let pair: IssuedPair = first;
  for (let hop = 0; hop < GRACE_HOPS; hop++) {
    const next = await getRefresh(ctx, hashToken(pair.refresh_token), nowMs);
    const later: IssuedPair | undefined =
      next?.status === 'used' && next.successor !== null ? openPair(pair.refresh_token, next.successor) : undefined;
    if (!later) break;
    pair = later;
  }
  const key = await getKey(ctx, refresh.key_id);
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

/**
 * The currency of a grant's store. A store is never deleted, so a live grant of a store that is
 * not there is a fault of the data (a 500), nothing its client caused.
 */
async function storeCurrency(ctx: RequestContext, storeId: string): Promise<string> {
  const store = await getStore(ctx, storeId);
  if (!store) throw new Error(`store "${storeId}" of a live grant does not exist`);
  return store.currency_code;
}

/**
 * A new access and refresh token for the grant, spending what was presented (`spend`, given the
 * new pair) and, for a code exchange, keeping the client's registration (`keep`): one read of the
 * key with its token item (and of the store, when the token item lacks its currency), then one
 * transaction (a second, without `keep`, when the registration could not be kept).
 */
async function issue(
  ctx: RequestContext,
  keyId: number,
  spend: (pair: IssuedPair) => Spent,
  from: { client_id: string; resource: string; audience: string },
  accessAudience: string,
  nowMs: number,
  keep?: KeepClient,
): Promise<IssueOutcome> {
  const pair: IssuedPair = {
    access_token: generateAccessToken(),
    refresh_token: generateRefreshToken(),
    access_expires_at: nowMs + ACCESS_TOKEN_SECONDS * 1000,
  };
  const read = await readGrantKey(ctx, keyId);
  if (read?.key.status !== 'active') return { ok: false, reason: 'revoked' };
  const tokens: TokenIssue = {
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
    // The live token item carries the store's currency; the store is read only if it does not.
    currency: read.currency ?? (await storeCurrency(ctx, read.key.store_id)),
  };
  let issued = await issueTokens(ctx, read, spend(pair), { ...tokens, keepClient: keep });
  // The registration could not be kept (it expired meanwhile, or is kept longer already): the
  // tokens are issued all the same, without it.
  if (!issued.ok && issued.reason === 'unkept') issued = await issueTokens(ctx, read, spend(pair), tokens);
  if (!issued.ok) return { ok: false, reason: issued.reason === 'spent' ? 'spent' : 'conflict' };
  return { ok: true, body: tokenBody(pair, read.key.abilities, nowMs) };
}
