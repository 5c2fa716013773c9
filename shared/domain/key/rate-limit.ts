/**
 * Exact sliding-window limit: the key's accepted request times of the last 60 s are kept
 * (at most `limit` of them), so "the 61st request within 60 s" is refused exactly, with no
 * fixed-window burst at minute boundaries. Refused requests are not recorded.
 */
export const WINDOW_MS = 60_000;

export interface RateDecision {
  allowed: boolean;
  /** The window to store when allowed (old entries dropped, this request added). */
  window: number[];
  limit: number;
  remaining: number;
  /** Seconds until the window has room again (RateLimit-Reset and Retry-After, ≥ 1 when refused). */
  resetSeconds: number;
}

export function decide(previous: readonly number[] | undefined, now: number, limit: number): RateDecision {
  const live = (previous ?? []).filter((t) => t > now - WINDOW_MS).sort((a, b) => a - b);
  if (live.length >= limit) {
    // The oldest entry that must expire before one more request fits.
    const blocking = live[live.length - limit] ?? now;
    return {
      allowed: false,
      window: live,
      limit,
      remaining: 0,
      resetSeconds: Math.max(1, Math.ceil((blocking + WINDOW_MS - now) / 1000)),
    };
  }
  const window = [...live, now];
  const oldest = window[0] ?? now;
  return {
    allowed: true,
    window,
    limit,
    remaining: limit - window.length,
    resetSeconds: Math.max(1, Math.ceil((oldest + WINDOW_MS - now) / 1000)),
  };
}
