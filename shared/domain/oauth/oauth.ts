import {
  createCipheriv,
  createDecipheriv,
  createHash,
  hkdfSync,
  randomBytes,
  randomInt,
  timingSafeEqual,
} from 'node:crypto';
import { ABILITIES, isAbility, type Ability } from '../key/abilities.ts';
import { cleanClientName } from './approval.ts';

/**
 * The OAuth 2.1 pieces that need no storage and no network (docs/oauth.md): the server's
 * resource identifiers and metadata documents, PKCE, scopes, approval codes and token shapes.
 */

export const ACCESS_TOKEN_SECONDS = 3600;
export const REFRESH_TOKEN_SECONDS = 30 * 24 * 3600;
export const CODE_SECONDS = 60;
export const REQUEST_SECONDS = 600;
/** How long a registered client is kept once it got a token (from its first code exchange). */
export const CLIENT_SECONDS = 90 * 24 * 3600;
/**
 * How long a registration that never got a token is kept: a host registers right before it sends
 * the user to the authorize page, and a flow that is not approved within a day is abandoned (the
 * request itself lasts 10 minutes). Registrations that nobody uses cannot pile up for 90 days.
 */
export const UNUSED_CLIENT_SECONDS = 24 * 3600;

/**
 * The size of what a client registers: 10 redirect URIs, each at most 2,000 characters (the URL
 * length every browser handles), and 8 KB in all (UTF-8). The longest a host we know registers
 * is Cursor's three, about 130 bytes together; the bound keeps a stored client under 9 KB.
 */
export const MAX_REDIRECT_URIS = 10;
export const MAX_REDIRECT_URI_LENGTH = 2000;
export const MAX_REDIRECT_URIS_BYTES = 8 * 1024;
/** How long the refresh token just rotated answers with the pair it was rotated to (parallel refreshes). */
export const REFRESH_GRACE_SECONDS = 30;

export const WELL_KNOWN_RESOURCE = '/.well-known/oauth-protected-resource';
export const WELL_KNOWN_SERVER = '/.well-known/oauth-authorization-server';

/** The server's own resources: the whole HTTP API, or only its MCP endpoint. `audience`: the path it covers. */
export function resources(root: string, basePath: string) {
  return [
    { resource: `${root}${basePath}`, audience: basePath },
    { resource: `${root}${basePath}/mcp`, audience: `${basePath}/mcp` },
  ];
}

export type ResourceTarget = ReturnType<typeof resources>[number];

/** One trailing slash names the same resource (`{base}/` is `{base}`). */
const withoutTrailingSlash = (resource: string) => (resource.endsWith('/') ? resource.slice(0, -1) : resource);

/**
 * The resource an authorization request asks for (RFC 8707): one of the server's two, a trailing
 * slash ignored; none at all means the HTTP API, as clients written before MCP required `resource`
 * send none. undefined: not a resource of this server.
 */
export function requestedResource(root: string, basePath: string, resource: string | undefined) {
  const all = resources(root, basePath);
  if (resource === undefined || resource === '') return all[0];
  return all.find((r) => r.resource === withoutTrailingSlash(resource));
}

/**
 * The resource a token request names, within what was granted: the grant's own resource or one of
 * the server's resources under it (a grant for the HTTP API names the MCP endpoint when the client
 * talks only to that; the access token is then only good there). None: the grant's resource.
 * undefined: outside the grant.
 */
export function resourceWithin(
  root: string,
  basePath: string,
  granted: ResourceTarget,
  resource: string | undefined,
): ResourceTarget | undefined {
  if (resource === undefined || resource === '') return granted;
  const asked = requestedResource(root, basePath, resource);
  if (!asked) return undefined;
  return asked.resource === granted.resource || asked.resource.startsWith(`${granted.resource}/`) ? asked : undefined;
}

/** Whether a token whose resource covers `audience` may be used on `resourcePath` (an API Gateway resource template). */
export function audienceCovers(audience: string, resourcePath: string): boolean {
  return resourcePath === audience || resourcePath.startsWith(`${audience}/`);
}

export function protectedResourceMetadata(root: string, resource: string) {
  return {
    resource,
    authorization_servers: [root],
    scopes_supported: [...ABILITIES],
    bearer_methods_supported: ['header'],
    resource_name: 'Store integration API',
  };
}

export function authorizationServerMetadata(root: string) {
  return {
    issuer: root,
    authorization_endpoint: `${root}/oauth/authorize`,
    token_endpoint: `${root}/oauth/token`,
    registration_endpoint: `${root}/oauth/register`,
    scopes_supported: [...ABILITIES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['none'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
  };
}

/** PKCE S256 (RFC 7636 §4.6): BASE64URL(SHA256(verifier)) equals the challenge. */
export function pkceMatches(verifier: string, challenge: string): boolean {
  if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) return false;
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

/** An S256 challenge is the base64url of 32 bytes: 43 characters. */
export const isS256Challenge = (challenge: string) => /^[A-Za-z0-9_-]{43}$/.test(challenge);

/**
 * `scope`: space-separated abilities; absent means all six. `offline_access` (what MCP clients ask
 * for to get a refresh token) is accepted and ignored: every grant gets one. Unknown names: undefined.
 */
export function parseScope(scope: string | undefined): Ability[] | undefined {
  const names = [...new Set((scope ?? '').trim().split(/ +/))].filter((n) => n !== '' && n !== 'offline_access');
  if (names.length === 0) return [...ABILITIES];
  return names.every(isAbility) ? (names as Ability[]) : undefined;
}

// No 0/O, 1/I/L, 5/S look-alikes: an admin reads the code off someone's screen.
const APPROVAL_LETTERS = 'ABCDEFGHJKMNPQRTUVWXYZ2346789';

/** `KXQ4-7MZP`: 8 letters of a 29-letter alphabet (~39 bits); it only names a request, it grants nothing. */
export function generateApprovalCode(): string {
  const letters = Array.from({ length: 8 }, () => APPROVAL_LETTERS[randomInt(APPROVAL_LETTERS.length)]).join('');
  return `${letters.slice(0, 4)}-${letters.slice(4)}`;
}

/** A cursor of the admin's list of requests: the index sort key of a page's last request (shared/db/keys.ts). */
export const isRequestCursor = (cursor: string) => /^\d{15}#[A-Z0-9]{4}-[A-Z0-9]{4}$/.test(cursor);

/** What the admin typed, in the stored spelling (case and the dash optional); undefined when it cannot be a code. */
export function normalizeApprovalCode(input: string): string | undefined {
  const letters = input.toUpperCase().replace(/[\s-]/g, '');
  if (letters.length !== 8 || [...letters].some((c) => !APPROVAL_LETTERS.includes(c))) return undefined;
  return `${letters.slice(0, 4)}-${letters.slice(4)}`;
}

const random = (prefix: string) => prefix + randomBytes(32).toString('base64url');
export const generateAccessToken = () => random('sio_');
export const generateRefreshToken = () => random('sir_');
export const generateCode = () => random('sic_');
/** The waiting page's handle on its request: only that page knows it. */
export const generateRequestSecret = () => random('sis_');
export const generateClientId = () => `oc_${randomBytes(16).toString('hex')}`;

export const looksLikeSecret = (prefix: string, value: string) =>
  value.startsWith(prefix) && /^[A-Za-z0-9_-]{43}$/.test(value.slice(prefix.length));

/** The pair a refresh issued, as the refresh token it replaced answers it again during the grace window. */
export interface IssuedPair {
  access_token: string;
  refresh_token: string;
  /** When the access token expires (ms since the epoch). */
  access_expires_at: number;
}

/**
 * The key that seals a rotated refresh token's successor pair: derived from the rotated token
 * itself, which the store never holds (only its SHA-256), so the sealed pair opens only for a
 * caller presenting that token, and the table alone (a backup, a read-only role) yields nothing.
 */
const graceKey = (refreshToken: string) =>
  Buffer.from(hkdfSync('sha256', refreshToken, Buffer.alloc(0), 'oauth refresh grace pair', 32));

/** AES-256-GCM of the pair under the rotated token's key: `iv.ciphertext.tag`, base64url. */
export function sealPair(rotatedToken: string, pair: IssuedPair): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', graceKey(rotatedToken), iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(pair), 'utf8'), cipher.final()]);
  return [iv, sealed, cipher.getAuthTag()].map((b) => b.toString('base64url')).join('.');
}

/** The pair sealed by sealPair, or undefined when it does not open with this token. */
export function openPair(rotatedToken: string, sealed: string): IssuedPair | undefined {
  const [iv, body, tag] = sealed.split('.').map((p) => Buffer.from(p, 'base64url'));
  if (!iv || !body || !tag) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', graceKey(rotatedToken), iv);
    decipher.setAuthTag(tag);
    return JSON.parse(Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8')) as IssuedPair;
  } catch {
    return undefined;
  }
}

const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '[::1]'];

/**
 * Schemes a browser handles itself rather than handing to an app: a redirect to one would run
 * script, read local files or stay inside the browser. `http` is here too; it is allowed only on a
 * loopback host, below.
 */
const BROWSER_SCHEMES = new Set([
  'http:',
  'javascript:',
  'vbscript:',
  'data:',
  'file:',
  'about:',
  'blob:',
  'filesystem:',
  'view-source:',
  'ftp:',
  'ws:',
  'wss:',
]);

/**
 * The redirect URIs a client may register, none with a fragment or user info:
 * - https;
 * - http on a loopback host (RFC 8252 §7.3), matched with any port (redirectUriMatches);
 * - a private-use scheme (RFC 8252 §7.1), which the browser hands to the app that claimed it:
 *   any RFC 3986 scheme but those a browser handles itself, with something after the scheme.
 *   RFC 8252 recommends a reverse domain name (`com.example.app:/callback`), but the hosts that
 *   agents live in use their product's name (`cursor://anysphere.cursor-mcp/oauth/callback`,
 *   `vscode://…`), so a period is not required.
 */
export function isAcceptableRedirectUri(uri: string): boolean {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return false;
  }
  if (url.hash !== '' || uri.includes('#') || url.username || url.password) return false;
  if (url.protocol === 'https:') return true;
  if (url.protocol === 'http:') return LOOPBACK_HOSTS.includes(url.hostname);
  return (
    /^[a-z][a-z0-9+.-]*:$/.test(url.protocol) && !BROWSER_SCHEMES.has(url.protocol) && uri.length > url.protocol.length
  );
}

/** `http://{loopback host}` and its port, if `uri` is a loopback redirect URI; what follows is the rest. */
const LOOPBACK_URI = /^(http:\/\/(?:127\.0\.0\.1|localhost|\[::1\]))(?::\d{1,5})?(?=[/?]|$)/;

/**
 * Whether a redirect URI asked for at authorize is one the client registered: character for
 * character (OAuth 2.1 §2.3.1), except that a loopback one may name any port (RFC 8252 §7.3: a
 * native app listens on whatever port is free). Host, path and query still match exactly.
 */
export function redirectUriMatches(registered: string, requested: string): boolean {
  if (registered === requested) return true;
  const withoutPort = (uri: string) => (LOOPBACK_URI.test(uri) ? uri.replace(LOOPBACK_URI, '$1') : undefined);
  const a = withoutPort(registered);
  return a !== undefined && a === withoutPort(requested);
}

/**
 * What the store admin and the page are shown of where the code goes: the host of an http(s) URI,
 * the scheme and authority of a private-use one (`cursor://anysphere.cursor-mcp`, or `com.example.app:`).
 */
export function redirectTarget(uri: string): string {
  const url = new URL(uri);
  if (url.protocol === 'https:' || url.protocol === 'http:') return url.host;
  return url.host === '' ? url.protocol : `${url.protocol}//${url.host}`;
}

/** A client as the authorization server knows it: registered (RFC 7591) or from its metadata document. */
export interface OAuthClient {
  client_id: string;
  client_name: string;
  redirect_uris: string[];
}

export type ClientCheck = { ok: true; client: OAuthClient } | { ok: false; reason: string };

/**
 * The token endpoint authentication methods a registration or a metadata document may name. Every
 * client is registered as a public one (`none`) whatever it names, as RFC 7591 §3.2.1 lets a server
 * replace a requested value (the registration answer says `none`): the code is bound to the client
 * that started the flow by PKCE and to the store admin's approval, which a client secret would not
 * strengthen, and every host we serve falls back to `none` when the server offers only that
 * (docs/oauth.md#client-authentication). An unknown method is still refused.
 */
const TOKEN_ENDPOINT_AUTH_METHODS = new Set([
  'none',
  'client_secret_post',
  'client_secret_basic',
  'client_secret_jwt',
  'private_key_jwt',
]);

/** A client metadata document or registration body, validated (RFC 7591 §2, the MCP client-id-metadata draft). */
export function checkClientMetadata(body: unknown, clientId: string): ClientCheck {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { ok: false, reason: 'not a JSON object' };
  const b = body as Record<string, unknown>;
  const uris = b.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > MAX_REDIRECT_URIS)
    return { ok: false, reason: `redirect_uris must list 1 to ${MAX_REDIRECT_URIS} URIs` };
  if (!uris.every((u) => typeof u === 'string' && isAcceptableRedirectUri(u)))
    return {
      ok: false,
      reason: 'every redirect URI must be https, http on a loopback host or an app’s own scheme, without a fragment',
    };
  if (uris.some((u: string) => u.length > MAX_REDIRECT_URI_LENGTH))
    return { ok: false, reason: `a redirect URI may be at most ${MAX_REDIRECT_URI_LENGTH} characters` };
  if (uris.reduce((bytes: number, u: string) => bytes + Buffer.byteLength(u, 'utf8'), 0) > MAX_REDIRECT_URIS_BYTES)
    return { ok: false, reason: `the redirect URIs may be at most ${MAX_REDIRECT_URIS_BYTES} bytes in all` };
  const auth = b.token_endpoint_auth_method;
  if (auth !== undefined && !(typeof auth === 'string' && TOKEN_ENDPOINT_AUTH_METHODS.has(auth)))
    return {
      ok: false,
      reason: `token_endpoint_auth_method must be one of ${[...TOKEN_ENDPOINT_AUTH_METHODS].join(', ')}`,
    };
  const name = cleanClientName(b.client_name, clientId);
  return {
    ok: true,
    client: { client_id: clientId, client_name: name, redirect_uris: uris as string[] },
  };
}
