import { apiOrigin, type OriginSource } from './http-handler.ts';

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
