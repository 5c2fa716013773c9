/** What apiOrigin reads: the same fields in a proxy event and an authorizer's REQUEST event. */
export interface OriginSource {
  headers?: Record<string, string | undefined> | null;
  requestContext?: { domainName?: string } | null;
}

/**
 * The API's own origin as this request reached it: API Gateway's domain name, and the scheme API
 * Gateway itself puts in X-Forwarded-Proto (it overwrites what a client sends; the local gateway
 * does the same). Never the client's Host header: page links and the MCP Origin check rely on it.
 */
export function apiOrigin(event: OriginSource): string {
  const headers = event.headers ?? {};
  const forwarded = Object.entries(headers).find(([name]) => name.toLowerCase() === 'x-forwarded-proto')?.[1];
  const proto = forwarded === 'http' ? 'http' : 'https';
  return `${proto}://${event.requestContext?.domainName ?? 'localhost'}`;
}

/**
 * Whether a request carries an Origin other than the API's own (MCP transport spec: servers must
 * validate Origin against DNS rebinding). No Origin is fine (server-side clients send none); the
 * opaque `null` origin of sandboxed pages and files is foreign.
 */
export function isForeignOrigin(event: OriginSource): boolean {
  const origin = Object.entries(event.headers ?? {}).find(([name]) => name.toLowerCase() === 'origin')?.[1];
  if (origin === undefined) return false;
  return origin.trim().toLowerCase() !== apiOrigin(event).toLowerCase();
}
