import type { RequestContext } from '#shared/context.ts';
import { takePlace } from '#db/oauth/limit.repo.ts';
import { limitWindow, type OAuthLimits, secondsLeftInWindow } from '#domain/oauth/bounds.ts';
import type { Caller as SeenCaller } from '#domain/oauth/approval.ts';

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

/**
 * Takes the caller's place in the window's count of `scope`: undefined when it did, else why not
 * (`Limited`, nothing taken).
 */
export async function claimPlace(
  ctx: RequestContext,
  scope: string,
  max: number,
  what: string,
  nowMs: number,
): Promise<Limited | undefined> {
  if (await takePlace(ctx, scope, limitWindow(nowMs), max)) return undefined;
  const retryAfterSeconds = secondsLeftInWindow(nowMs);
  return { kind: 'limited', description: `${what}; retry after ${retryAfterSeconds} s`, retryAfterSeconds };
}
