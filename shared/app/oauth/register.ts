import type { RequestContext } from '#shared/context.ts';
import { getClient, putClient } from '#db/oauth/client.repo.ts';
import {
  checkClientMetadata,
  type ClientCheck,
  generateClientId,
  type OAuthClient,
  UNUSED_CLIENT_SECONDS,
} from '#domain/oauth/oauth.ts';
import { type Caller, type Limited, claimPlace } from './caller.ts';
import { isUrlClientId } from '#domain/oauth/approval.ts';

/**
 * The clients of the authorization server (docs/oauth.md): those that register with RFC 7591, and
 * those whose client_id is the URL of a Client ID Metadata Document, fetched when they are used.
 */

/** Fetches a Client ID Metadata Document under the webhook URL rules (functions/oauth/client-metadata.ts). */
export type FetchClientMetadata = (clientId: string) => Promise<ClientCheck>;

export type RegisterOutcome =
  | { kind: 'registered'; client: OAuthClient }
  | { kind: 'invalid'; reason: string }
  | Limited;

/**
 * RFC 7591 registration. Every attempt counts against the caller's IP, valid or not; a client is
 * kept a day until it gets a token (the code exchange keeps it longer: ./token.ts).
 */
export async function registerClient(
  ctx: RequestContext,
  body: unknown,
  nowMs: number,
  caller: Caller,
): Promise<RegisterOutcome> {
  const limited = await claimPlace(
    ctx,
    `register#${caller.ip ?? 'unknown'}`,
    caller.limits.registrationsPerIp,
    `more than ${caller.limits.registrationsPerIp} registrations from this address in 10 minutes`,
    nowMs,
  );
  if (limited) return limited;
  const checked = checkClientMetadata(body, generateClientId());
  if (!checked.ok) return { kind: 'invalid', reason: checked.reason };
  await putClient(ctx, checked.client, nowMs, UNUSED_CLIENT_SECONDS);
  return { kind: 'registered', client: checked.client };
}

/** The client a client_id names: a registered one, or the one its metadata document describes. */
export async function resolveClient(
  ctx: RequestContext,
  clientId: string,
  nowMs: number,
  fetchMetadata: FetchClientMetadata,
): Promise<ClientCheck> {
  if (isUrlClientId(clientId)) return fetchMetadata(clientId);
  const client = /^oc_[0-9a-f]{32}$/.test(clientId) ? await getClient(ctx, clientId, nowMs) : undefined;
  return client ? { ok: true, client } : { ok: false, reason: 'client_id is not a registered client' };
}
