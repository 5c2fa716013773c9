import type { STSClient } from '@aws-sdk/client-sts';
import { config } from '#shared/config.ts';
import { awsClientBuilt } from '#shared/aws-clients.ts';

/**
 * The integrator's role, assumed with the key's external id (docs/destinations.md): AWS's way for
 * a third party to act in a customer's account. Credentials are kept per role and external id in
 * this container until five minutes before they expire (they last an hour), so STS is called about
 * once an hour per destination, not per send; callers at the same moment share one call. A refusal
 * (the role does not trust the signer, names another external id, or does not exist: STS says
 * AccessDenied to all three) is an attempt's failure, never cached.
 */
const SESSION_SECONDS = 3600;
const REFRESH_BEFORE_MS = 5 * 60_000;
const MAX_CACHED = 1000;

export interface RoleCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string | undefined;
  expiration: Date;
}
/** By role and external id: the session (or the call that gets it), and when it is to be renewed. */
const cache = new Map<string, { credentials: Promise<RoleCredentials>; renewAtMs: number }>();

let sts: STSClient | undefined;
async function stsClient(): Promise<STSClient> {
  if (sts) return sts;
  const { STSClient } = await import('@aws-sdk/client-sts');
  // Regional STS (the signer's region); AWS_ENDPOINT_URL_STS points it at an emulator locally.
  sts ??= awsClientBuilt(
    new STSClient({
      region: config().region,
      maxAttempts: 2,
      requestHandler: { connectionTimeout: 3000, requestTimeout: 5000 },
    }),
  );
  return sts;
}

/** Why an assume-role refused: the attempt's `last_error` names it (`assume role …: AccessDenied: …`). */
export class AssumeRoleRefused extends Error {
  constructor(
    readonly code: string,
    readonly status: number | null,
    message: string,
  ) {
    super(message);
  }
}

async function assume(roleArn: string, externalId: string, keyId: number) {
  const { AssumeRoleCommand } = await import('@aws-sdk/client-sts');
  try {
    const out = await (await stsClient()).send(
      new AssumeRoleCommand({
        RoleArn: roleArn,
        // Shown in the integrator's CloudTrail: which key's deliveries acted in their account.
        RoleSessionName: `store-events-key-${keyId}`,
        ExternalId: externalId,
        DurationSeconds: SESSION_SECONDS,
      }),
    );
    const c = out.Credentials;
    if (!c?.AccessKeyId || !c.SecretAccessKey || !c.Expiration) throw new Error('STS returned no credentials');
    return {
      accessKeyId: c.AccessKeyId,
      secretAccessKey: c.SecretAccessKey,
      sessionToken: c.SessionToken,
      expiration: new Date(c.Expiration),
    };
  } catch (err) {
    const e = err as Error & { $metadata?: { httpStatusCode?: number } };
    throw new AssumeRoleRefused(e.name, e.$metadata?.httpStatusCode ?? null, e.message);
  }
}

/** Credentials of the integrator's role for this key, from the cache while they have over five minutes left. */
export function roleCredentials(roleArn: string, externalId: string, keyId: number, nowMs = Date.now()) {
  const id = `${roleArn} ${externalId}`;
  const cached = cache.get(id);
  if (cached && cached.renewAtMs > nowMs) return cached.credentials;
  const entry = { credentials: assume(roleArn, externalId, keyId), renewAtMs: Number.POSITIVE_INFINITY };
  if (!cached && cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
  cache.set(id, entry);
  entry.credentials.then(
    (c) => {
      entry.renewAtMs = c.expiration.getTime() - REFRESH_BEFORE_MS;
    },
    // A refusal is not kept: the next attempt asks STS again (the integrator may have fixed the trust).
    () => {
      if (cache.get(id) === entry) cache.delete(id);
    },
  );
  return entry.credentials;
}

/** Forgets every cached session (tests, and a local stack that swaps its STS). */
export function clearRoleCredentials(): void {
  cache.clear();
  sts?.destroy();
  sts = undefined;
}
