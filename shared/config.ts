/**
 * The process environment, read once and validated. Every other module takes its settings from
 * here, so a missing or malformed variable fails at start-up with one clear line, not mid-request.
 */
export interface Config {
  tableName: string;
  /** Set for DynamoDB Local or any non-default endpoint; unset in AWS. */
  dynamodbEndpoint: string | undefined;
  region: string;
  rateLimitPerMinute: number;
  /** MCP session set-up's own limit per key per rolling minute (docs/mcp.md#rate-limit). */
  mcpSetUpPerMinute: number;
  /** OAuth bounds per client IP and in all, per 10-minute window (docs/oauth.md#bounds). */
  oauthLimits: { registrationsPerIp: number; authorizationsPerIp: number; pendingRequests: number };
  /** Seconds to wait before each webhook retry; the queue is given up after the last one. */
  webhookRetrySchedule: number[];
  /** The longest wait spent in flight, and the longest hop of a delayed copy (SQS: 900 s at most). */
  webhookQueueWaitLimitSeconds: number;
  /** The whole answer of one webhook POST must arrive within this (10 s); only tests raise it. */
  webhookResponseTimeoutMs: number;
  /** An endpoint is parked after this many consecutive failed attempts ... */
  webhookParkAfterFailures: number;
  /** ... spanning at least this long (docs/webhooks.md, "Parked endpoints"). */
  webhookParkAfterSeconds: number;
  /** How often a parked endpoint is probed. */
  webhookProbeIntervalSeconds: number;
  allowPrivateWebhooks: boolean;
  webhookQueueUrl: string | undefined;
  /** The signer's slow lane (docs/webhooks.md, "Lanes"): endpoints whose circuit is open. */
  webhookSlowQueueUrl: string | undefined;
  /** The express lane (docs/webhooks.md, "Order events first"): order writes ask it to number their event at once. */
  expressQueueUrl: string | undefined;
  /** Failed attempts in a row that open an endpoint's circuit (its deliveries move to the slow lane). */
  webhookCircuitAfterFailures: number;
  /** Attempts one endpoint may have under way at once in the slow lane. */
  webhookSlowLaneAttemptsPerEndpoint: number;
  /** Operational events (`webhook.endpoint_parked`) go to this SNS topic (the alarm topic); unset: the log only. */
  operationsTopicArn: string | undefined;
  /**
   * The signer function the admin asks to ping an SQS or EventBridge destination (only the signer's
   * role may assume the integrator's role: functions/webhooks/ping.ts); unset: the admin sends itself (local stack).
   */
  signerFunctionName: string | undefined;
  /** KMS key that seals webhook secrets at rest (AWS). */
  webhookSecretKmsKeyId: string | undefined;
  /** The local stand-in's AES key file (the local stack); ignored when the KMS key is set. */
  webhookSecretKeyFile: string | undefined;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** The longest one DynamoDB call may take, SDK retries included, before it answers 503 (docs/availability.md). */
  dynamodbCallTimeoutMs: number;
}

export function intFrom(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return n;
}

/** DynamoDB's rule for a table name; checked here so that a bad one stops a start, not its first CreateTable. */
function tableNameFrom(raw: string | undefined): string {
  if (raw === undefined || raw === '') return 'integrations';
  if (!/^[A-Za-z0-9_.-]{3,255}$/.test(raw))
    throw new Error(`TABLE_NAME must be 3 to 255 letters, digits, "_", "-" or ".", got "${raw}"`);
  return raw;
}

/** An endpoint the SDK can call, or undefined when the variable is unset (AWS). */
function endpointFrom(name: string, raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:')
    throw new Error(`${name} must be an http:// or https:// URL, got "${raw}"`);
  return raw;
}

/**
 * Waits between webhook attempts: retries at about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 24 h
 * after the first attempt, so a delivery is given up after 24 h (docs/contract.md#webhooks).
 */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = [5, 295, 1500, 5400, 10800, 18000, 50400];

/** The signer's lanes (docs/webhooks.md, "Lanes"): failures in a row that open a circuit, and the slow lane's attempts per endpoint. */
export const DEFAULT_WEBHOOK_CIRCUIT_AFTER_FAILURES = 3;
export const DEFAULT_WEBHOOK_SLOW_LANE_ATTEMPTS_PER_ENDPOINT = 2;

function parseRetrySchedule(raw: string | undefined): number[] {
  if (raw === undefined || raw.trim() === '') return DEFAULT_WEBHOOK_RETRY_SCHEDULE;
  const parts = raw.split(',').map((s) => Number(s.trim()));
  if (parts.some((n) => !Number.isInteger(n) || n < 0 || n > 43200 * 2)) {
    throw new Error(`WEBHOOK_RETRY_SCHEDULE must be comma-separated whole seconds, got "${raw}"`);
  }
  return parts;
}

/**
 * A key-file path, or undefined when the variable is unset. An empty value or the word
 * "undefined" (what `process.env.X = undefined` stores) is refused: either would make the local
 * cipher write a fresh AES key wherever the process happens to run, e.g. into a checkout.
 */
function keyFileFrom(name: string, raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const path = raw.trim();
  if (path === '' || path === 'undefined' || path === 'null') {
    throw new Error(`${name} must be the path of the local AES key file (or unset), got "${raw}"`);
  }
  return path;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const logLevel = (env.LOG_LEVEL ?? 'info') as Config['logLevel'];
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel))
    throw new Error(`LOG_LEVEL "${logLevel}" is not one of debug, info, warn, error`);
  return {
    tableName: tableNameFrom(env.TABLE_NAME),
    dynamodbEndpoint: endpointFrom('DYNAMODB_ENDPOINT', env.DYNAMODB_ENDPOINT),
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    // Up to 1000, the token item's per-second counts keep it under 1 KB (see shared/domain/key/api-key.ts).
    rateLimitPerMinute: intFrom('RATE_LIMIT_PER_MINUTE', env.RATE_LIMIT_PER_MINUTE, 60, 1, 1000),
    // Generous: a client sets up a session with two or three of these before its first tool call.
    mcpSetUpPerMinute: intFrom('MCP_SET_UP_PER_MINUTE', env.MCP_SET_UP_PER_MINUTE, 600, 1, 1000),
    // Far above what a host sends (one registration, one or two authorize pages per connection);
    // raised only by the test suite's shared stack, whose hundreds of flows all come from 127.0.0.1.
    oauthLimits: {
      registrationsPerIp: intFrom('OAUTH_REGISTRATIONS_PER_IP', env.OAUTH_REGISTRATIONS_PER_IP, 20, 1, 1_000_000),
      authorizationsPerIp: intFrom('OAUTH_AUTHORIZATIONS_PER_IP', env.OAUTH_AUTHORIZATIONS_PER_IP, 60, 1, 1_000_000),
      pendingRequests: intFrom('OAUTH_PENDING_REQUESTS', env.OAUTH_PENDING_REQUESTS, 1000, 1, 1_000_000),
    },
    webhookRetrySchedule: parseRetrySchedule(env.WEBHOOK_RETRY_SCHEDULE),
    // Lowered only by tests, to see hops within seconds.
    webhookQueueWaitLimitSeconds: intFrom(
      'WEBHOOK_QUEUE_WAIT_LIMIT_SECONDS',
      env.WEBHOOK_QUEUE_WAIT_LIMIT_SECONDS,
      900,
      1,
      900,
    ),
    webhookResponseTimeoutMs: intFrom(
      'WEBHOOK_RESPONSE_TIMEOUT_MS',
      env.WEBHOOK_RESPONSE_TIMEOUT_MS,
      10_000,
      1000,
      300_000,
    ),
    webhookParkAfterFailures: intFrom('WEBHOOK_PARK_AFTER_FAILURES', env.WEBHOOK_PARK_AFTER_FAILURES, 10, 1, 10_000),
    webhookParkAfterSeconds: intFrom('WEBHOOK_PARK_AFTER_SECONDS', env.WEBHOOK_PARK_AFTER_SECONDS, 900, 0, 7 * 86_400),
    webhookProbeIntervalSeconds: intFrom(
      'WEBHOOK_PROBE_INTERVAL_SECONDS',
      env.WEBHOOK_PROBE_INTERVAL_SECONDS,
      300,
      1,
      86_400,
    ),
    allowPrivateWebhooks: env.ALLOW_PRIVATE_WEBHOOKS === '1',
    webhookQueueUrl: env.WEBHOOK_QUEUE_URL || undefined,
    webhookSlowQueueUrl: env.WEBHOOK_SLOW_QUEUE_URL || undefined,
    expressQueueUrl: env.EXPRESS_QUEUE_URL || undefined,
    webhookCircuitAfterFailures: intFrom(
      'WEBHOOK_CIRCUIT_AFTER_FAILURES',
      env.WEBHOOK_CIRCUIT_AFTER_FAILURES,
      DEFAULT_WEBHOOK_CIRCUIT_AFTER_FAILURES,
      1,
      10_000,
    ),
    webhookSlowLaneAttemptsPerEndpoint: intFrom(
      'WEBHOOK_SLOW_LANE_ATTEMPTS_PER_ENDPOINT',
      env.WEBHOOK_SLOW_LANE_ATTEMPTS_PER_ENDPOINT,
      DEFAULT_WEBHOOK_SLOW_LANE_ATTEMPTS_PER_ENDPOINT,
      1,
      10,
    ),
    operationsTopicArn: env.OPERATIONS_TOPIC_ARN || undefined,
    signerFunctionName: env.SIGNER_FUNCTION_NAME || undefined,
    webhookSecretKmsKeyId: env.WEBHOOK_SECRET_KMS_KEY_ID || undefined,
    webhookSecretKeyFile: keyFileFrom('WEBHOOK_SECRET_KEY_FILE', env.WEBHOOK_SECRET_KEY_FILE),
    logLevel,
    // DynamoDB answers in milliseconds; DynamoDB Local on a loaded CI machine was measured taking
    // over 10 s for one call, which must not turn into 503s (docs/availability.md).
    dynamodbCallTimeoutMs: intFrom(
      'DYNAMODB_CALL_TIMEOUT_MS',
      env.DYNAMODB_CALL_TIMEOUT_MS,
      env.DYNAMODB_ENDPOINT ? 25_000 : 2_500,
      100,
      60_000,
    ),
  };
}

let cached: Config | undefined;

/** The process-wide configuration (the local server sets the environment before first use). */
export function config(): Config {
  cached ??= loadConfig();
  return cached;
}

/** For the local stack and tests, which set the environment after import. */
export function resetConfig(): void {
  cached = undefined;
}
