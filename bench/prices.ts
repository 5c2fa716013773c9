/**
 * AWS list prices the cost model (bench/cost-model.ts) multiplies by what the bench measured. Data,
 * not code: when AWS changes a price, change it here and run the bench again. Each is the first
 * (smallest-volume) tier, without free tier, in USD.
 */
export const PRICES = {
  region: 'us-east-1',
  /** When these were read off the pricing pages. */
  asOf: '2025-06',
  dynamodb: {
    /** On-demand, Standard table class (the stack's; infra/stateful-stack.ts). */
    perMillionReadUnits: 0.125,
    perMillionWriteUnits: 0.625,
  },
  lambda: {
    /** Arm64 (the stack's architecture, infra/constructs/service-function.ts). */
    perGbSecond: 0.0000133334,
    perMillionRequests: 0.2,
  },
  apiGateway: {
    /** REST API, first 333 million requests a month. */
    restPerMillion: 3.5,
    /** HTTP API, first 300 million a month: what the REST-vs-HTTP decision weighs (docs/deploy.md). */
    httpPerMillion: 1.0,
  },
  waf: {
    /** The web ACL on the stage (on by default, context waf): per million requests inspected, and per month. */
    perMillionRequests: 0.6,
    perWebAclMonth: 5,
    perRuleMonth: 1,
  },
  cloudWatch: {
    /** Logs ingestion (Standard class); every log event also counts 26 bytes of metadata. */
    logsIngestionPerGb: 0.5,
    logEventOverheadBytes: 26,
    /** Per metric and month, first 10,000 metrics: EMF metrics and API Gateway's detailed (per-method) metrics. */
    metricPerMonth: 0.3,
  },
  xray: {
    /** Per million traces recorded; the default sampling rule records 1 a second and 5% of the rest. */
    perMillionTracesRecorded: 5.0,
    sampledFraction: 0.05,
  },
  dataTransfer: {
    /** Out to the internet, first 10 TB a month (the first 100 GB a month are free). */
    outPerGb: 0.09,
  },
  sqs: {
    /** Standard queue, per million requests (64 KB chunks). Paid per webhook delivery, not per API request. */
    perMillionRequests: 0.4,
  },
  kms: {
    /** Per 10,000 requests = $3 per million. The API path makes none; the webhook signer's data keys do. */
    perMillionRequests: 3.0,
  },
} as const;

/**
 * CloudWatch Logs bytes that are not the app's and that the local stack cannot print: the Lambda
 * platform's JSON lines per invocation (platform.start ~150 B, platform.report ~470 B with its X-Ray
 * fields), an estimate from their documented shape; counted when infra/bundling.ts LOG_PLATFORM_LINES.
 */
export const LAMBDA_PLATFORM_LOG_BYTES_PER_INVOCATION = 620;
