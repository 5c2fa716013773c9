/**
 * The OAuth endpoints' bounds per caller and in all (docs/oauth.md#bounds): pure arithmetic of the
 * windows they are counted in; the counts are stored by shared/db/oauth/limit.repo.ts.
 */

/**
 * The bounds on registration and authorization per caller (docs/oauth.md#bounds). Counted per
 * fixed window of LIMIT_WINDOW_SECONDS, which is also how long a request waits for the admin, so
 * a window's count bounds the requests it leaves pending.
 */
export interface OAuthLimits {
  /** Registrations per client IP per window. */
  registrationsPerIp: number;
  /** Authorization requests (the authorize page, valid or not) per client IP per window. */
  authorizationsPerIp: number;
  /** Requests stored for the admin per window, from everyone: the admin's list can never be flooded. */
  pendingRequests: number;
}
/** As long as an authorization request waits for the admin (REQUEST_SECONDS in ./oauth.ts). */
export const LIMIT_WINDOW_SECONDS = 600;

/** The fixed window `nowMs` falls in. */
export function limitWindow(nowMs: number) {
  const length = LIMIT_WINDOW_SECONDS * 1000;
  const startMs = Math.floor(nowMs / length) * length;
  return { startMs, endMs: startMs + length };
}

/** Seconds until the window of `nowMs` ends: when a refused caller can be served again. */
export const secondsLeftInWindow = (nowMs: number) => Math.max(1, Math.ceil((limitWindow(nowMs).endMs - nowMs) / 1000));
