import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { ABILITIES, isAbility, type Ability } from '../key/abilities.ts';

/**
 * The OAuth 2.1 pieces that need no storage and no network (docs/oauth.md): the server's
 * resource identifiers and metadata documents, PKCE, scopes, approval codes and token shapes.
 */

export const ACCESS_TOKEN_SECONDS = 3600;
export const REFRESH_TOKEN_SECONDS = 30 * 24 * 3600;
export const CODE_SECONDS = 60;
export const REQUEST_SECONDS = 600;
export const CLIENT_SECONDS = 90 * 24 * 3600;

export const WELL_KNOWN_RESOURCE = '/.well-known/oauth-protected-resource';
export const WELL_KNOWN_SERVER = '/.well-known/oauth-authorization-server';

/** The server's own resources: the whole HTTP API, or only its MCP endpoint. `audience`: the path it covers. */
export function resources(root: string, basePath: string) {
  return [
    { resource: `${root}${basePath}`, audience: basePath },
    { resource: `${root}${basePath}/mcp`, audience: `${basePath}/mcp` },
  ];
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

/** `scope`: space-separated abilities; absent means all six. Unknown names: undefined. */
export function parseScope(scope: string | undefined): Ability[] | undefined {
  if (scope === undefined || scope.trim() === '') return [...ABILITIES];
  const names = [...new Set(scope.trim().split(/ +/))];
  return names.every(isAbility) ? (names as Ability[]) : undefined;
}

// No 0/O, 1/I/L, 5/S look-alikes: an admin reads the code off someone's screen.
const APPROVAL_LETTERS = 'ABCDEFGHJKMNPQRTUVWXYZ2346789';

/** `KXQ4-7MZP`: 8 letters of a 29-letter alphabet (~39 bits); it only names a request, it grants nothing. */
export function generateApprovalCode(): string {
  const letters = Array.from({ length: 8 }, () => APPROVAL_LETTERS[randomInt(APPROVAL_LETTERS.length)]).join('');
  return `${letters.slice(0, 4)}-${letters.slice(4)}`;
}

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

/** The redirect URIs a client may register: https, or http on a loopback host (RFC 8252 §7.3), no fragment. */
export function isAcceptableRedirectUri(uri: string): boolean {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return false;
  }
  if (url.hash !== '' || uri.includes('#') || url.username || url.password) return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
}

/** A client as the authorization server knows it: registered (RFC 7591) or from its metadata document. */
export interface OAuthClient {
  client_id: string;
  client_name: string;
  redirect_uris: string[];
}

export type ClientCheck = { ok: true; client: OAuthClient } | { ok: false; reason: string };

/** A client metadata document or registration body, validated (RFC 7591 §2, the MCP client-id-metadata draft). */
export function checkClientMetadata(body: unknown, clientId: string): ClientCheck {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { ok: false, reason: 'not a JSON object' };
  const b = body as Record<string, unknown>;
  const uris = b.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10)
    return { ok: false, reason: 'redirect_uris must list 1 to 10 URIs' };
  if (!uris.every((u) => typeof u === 'string' && u.length <= 2000 && isAcceptableRedirectUri(u)))
    return { ok: false, reason: 'every redirect URI must be https (or http on a loopback host) without a fragment' };
  const auth = b.token_endpoint_auth_method;
  if (auth !== undefined && auth !== 'none')
    return { ok: false, reason: 'only public clients (token_endpoint_auth_method none) are supported' };
  const name = typeof b.client_name === 'string' && b.client_name.trim() !== '' ? b.client_name.trim() : clientId;
  return {
    ok: true,
    client: { client_id: clientId, client_name: name.slice(0, 100), redirect_uris: uris as string[] },
  };
}
