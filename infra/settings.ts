import type { Node } from 'constructs';

/** Everything a deployment can set through CDK context (`cdk.json` or `-c name=value`). */
export interface DeploySettings {
  /** Must be 0: see authorizerCacheRefusal. */
  authorizerCacheSeconds: number;
  rateLimitPerMinute: number;
  /** Receives every alarm; unset: no subscription (subscribe to the AlarmTopicArn output yourself). */
  alarmEmail: string | undefined;
  /** The web ACL on the stage (on unless context waf=false): malformed keys, oversized bodies, per-IP and per-key rates. */
  waf: boolean;
  wafPerIpPerMinute: number;
  /** Defaults to twice rateLimitPerMinute: what one key can take of the shared stage throttle. */
  wafPerKeyPerMinute: number;
  /** Keys active at once; the stage throttle is sized from it (infra/capacity.ts, docs/deploy.md). */
  plannedKeys: number;
  accountConcurrency: number;
  /** Reserved concurrency; 0 reserves none (accounts whose concurrency limit is below 1,000). */
  authorizerConcurrency: number;
  signerConcurrency: number;
  /**
   * API Gateway's per-method CloudWatch metrics (context detailedMetrics=true). Off: about 7
   * metrics per method at $0.30 a month each once there is traffic; the API-wide Count, 4XXError,
   * 5XXError and Latency the alarms read come without them (docs/performance.md).
   */
  detailedMetrics: boolean;
}

/** Lambda keeps this much of an account's concurrency unreserved; reservations cannot eat into it. */
const UNRESERVED_MINIMUM = 100;

export const DEFAULT_SETTINGS = {
  authorizerCacheSeconds: 0,
  rateLimitPerMinute: 60,
  waf: true,
  // 50 req/s for one address: many keys may share one integration host.
  wafPerIpPerMinute: 3000,
  wafPerKeyPerMinute: 120,
  plannedKeys: 300,
  // 200 burst × ~0.3 s cold start ≈ 60 concurrent at worst; warm it needs ~5 at 100 req/s.
  authorizerConcurrency: 100,
  // Each receiver that times out pins one signer execution for ≤ 10 s until it is parked: 50
  // leave ≥ 40 for everyone else with 1 slow delivery a second (docs/webhooks.md, "Isolation").
  signerConcurrency: 50,
  accountConcurrency: 1000,
  detailedMetrics: false,
};

/**
 * Why a non-zero authorizer cache is refused. The cached answer is keyed on the Authorization
 * header alone, so within the TTL (a) its Allow covers only the method first asked for, other
 * methods get 403; (b) the rate-limit verdict and remaining count in its context are replayed, so
 * a key is either never limited or limited on every method; (c) the missing-ability verdict of one
 * route is applied to the others; (d) a revoked key keeps working. Correct caching would need a
 * route-independent policy and a rate limit outside the authorizer; until then, 0.
 */
export function authorizerCacheRefusal(seconds: number): string | null {
  if (seconds === 0) return null;
  return (
    `authorizerCacheSeconds must be 0, got ${seconds}: a cached authorizer answer covers one method and replays its ` +
    'rate-limit and ability verdicts for every request of the key, and keeps a revoked key working (docs/deploy.md).'
  );
}

function int(node: Node, name: string, fallback: number, min: number, max: number): number {
  const raw = node.tryGetContext(name);
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`context ${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return n;
}

export function settingsFromContext(node: Node): DeploySettings {
  const email = node.tryGetContext('alarmEmail');
  if (email !== undefined && email !== '' && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(String(email))) {
    throw new Error(`context alarmEmail is not an e-mail address: "${email}"`);
  }
  const settings: DeploySettings = {
    authorizerCacheSeconds: int(node, 'authorizerCacheSeconds', DEFAULT_SETTINGS.authorizerCacheSeconds, 0, 3600),
    rateLimitPerMinute: int(node, 'rateLimitPerMinute', DEFAULT_SETTINGS.rateLimitPerMinute, 1, 1000),
    alarmEmail: email ? String(email) : undefined,
    waf: !['false', false, '0', 0].includes(node.tryGetContext('waf')),
    // WAF rate rules take limits from 10 to 2,000,000,000 per window.
    wafPerIpPerMinute: int(node, 'wafPerIpPerMinute', DEFAULT_SETTINGS.wafPerIpPerMinute, 10, 2_000_000_000),
    wafPerKeyPerMinute: int(
      node,
      'wafPerKeyPerMinute',
      2 * int(node, 'rateLimitPerMinute', DEFAULT_SETTINGS.rateLimitPerMinute, 1, 1000),
      10,
      2_000_000_000,
    ),
    plannedKeys: int(node, 'plannedKeys', DEFAULT_SETTINGS.plannedKeys, 1, 1_000_000),
    accountConcurrency: int(node, 'accountConcurrency', DEFAULT_SETTINGS.accountConcurrency, 10, 1_000_000),
    authorizerConcurrency: int(node, 'authorizerConcurrency', DEFAULT_SETTINGS.authorizerConcurrency, 0, 10_000),
    signerConcurrency: int(node, 'signerConcurrency', DEFAULT_SETTINGS.signerConcurrency, 0, 1000),
    detailedMetrics: ['true', true, '1', 1].includes(node.tryGetContext('detailedMetrics')),
  };
  if (settings.signerConcurrency === 1)
    throw new Error(
      'context signerConcurrency must be 0 (none reserved) or at least 2 (an SQS event source polls with 2 or more)',
    );
  const account = settings.accountConcurrency;
  const reserved = settings.authorizerConcurrency + settings.signerConcurrency;
  if (reserved > account - UNRESERVED_MINIMUM) {
    throw new Error(
      `authorizerConcurrency + signerConcurrency = ${reserved} leaves less than ${UNRESERVED_MINIMUM} of accountConcurrency ` +
        `(${account}) unreserved, which Lambda refuses; lower them, or set 0 to reserve none`,
    );
  }
  const refusal = authorizerCacheRefusal(settings.authorizerCacheSeconds);
  if (refusal) throw new Error(refusal);
  return settings;
}
