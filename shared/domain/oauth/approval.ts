import { timingSafeEqual } from 'node:crypto';

/**
 * What the store admin is shown of an authorization request, and the rules that keep it honest
 * (docs/oauth.md#approving-safely): anyone can ask, under any name, so what the admin decides on
 * says where the name comes from and who asked, and every text an outsider wrote is cleaned of
 * the characters that make one text look like another.
 */

/** Longest client name kept (in code points). */
export const CLIENT_NAME_MAX = 100;
/** Longest User-Agent kept: enough to tell one browser from another, no room for a story. */
export const USER_AGENT_MAX = 300;

/**
 * Format characters (Unicode category Cf: right-to-left overrides, zero-width spaces and joiners,
 * the byte order mark, invisible separators) are dropped; control characters (Cc), line and
 * paragraph separators and lone surrogates become a space; spaces are collapsed. So "Claude" with
 * a zero-width space inside, or "edualC" behind a right-to-left override, no longer looks like
 * "Claude" on a terminal or a page.
 */
export function cleanDisplayText(text: string, maxCodePoints: number): string {
  const cleaned = text
    .replace(/\p{Cf}/gu, '')
    .replace(/[\p{Cc}\p{Zl}\p{Zp}\p{Cs}]/gu, ' ')
    .replace(/\s+/gu, ' ')
    .trim();
  const points = [...cleaned];
  return points.length > maxCodePoints ? points.slice(0, maxCodePoints).join('').trimEnd() : cleaned;
}

/** A client's name as shown and stored: cleaned, at most 100 code points; nothing left: its client_id. */
export function cleanClientName(name: unknown, clientId: string): string {
  const cleaned = typeof name === 'string' ? cleanDisplayText(name, CLIENT_NAME_MAX) : '';
  return cleaned === '' ? clientId : cleaned;
}

/**
 * A client_id that is its Client ID Metadata Document's URL, not one this server issued at
 * registration: nothing of that client is stored.
 */
export const isUrlClientId = (clientId: string) => /^https?:\/\//.test(clientId);

/**
 * Who vouches for a client's name: the host that serves its Client ID Metadata Document (the
 * client_id is that document's URL), or nobody (null) for a client that registered itself
 * (RFC 7591): any caller can register any name.
 */
export function nameVerifiedBy(clientId: string): string | null {
  if (!isUrlClientId(clientId) || !URL.canParse(clientId)) return null;
  return new URL(clientId).host;
}

/** The caller of `/oauth/authorize` as the gateway saw it: source address and User-Agent. */
export interface Caller {
  ip: string | null;
  userAgent: string | null;
}

/** The caller as stored and shown: the User-Agent cleaned like a name and cut to 300 code points. */
export function cleanCaller(caller: Caller): Caller {
  const userAgent = caller.userAgent === null ? '' : cleanDisplayText(caller.userAgent, USER_AGENT_MAX);
  return { ip: caller.ip, userAgent: userAgent === '' ? null : userAgent };
}

/**
 * Whether two SHA-256 hex digests are the same, in constant time: the waiting page's secret is
 * compared this way so that the time of an answer says nothing about how much of a guess matched.
 */
export function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}
