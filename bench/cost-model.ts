/**
 * What one request costs in AWS, from what the cost bench measured on the local stack and the
 * prices in bench/prices.ts. Per request: API Gateway (REST) and WAF, two Lambda invocations (the
 * authorizer, its cache off, and the handler) billed per ms at the configured memory, DynamoDB
 * units by the billing rules (bench/billing-units.ts), CloudWatch Logs ingestion of every line the
 * request printed plus the access log line and the platform's lines, X-Ray at the default
 * sampling rate, and data transfer out of the response.
 */
import { FUNCTION_MEMORY_MB, LOG_PLATFORM_LINES } from '#infra/bundling.ts';
import { LAMBDA_PLATFORM_LOG_BYTES_PER_INVOCATION, PRICES } from './prices.ts';

/** Averages per request of one endpoint. */
export interface Measured {
  rru: number;
  wru: number;
  /** Lambda invocations (authorizer + handler). */
  invocations: number;
  /** Billed Lambda ms over those invocations: the local stack's time for the request (its DynamoDB Local standing in for DynamoDB). */
  lambdaMs: number;
  /** Log bytes the functions printed and the access log line, and how many lines (events). */
  logBytes: number;
  logLines: number;
  /** Status line, headers and body of the answer. */
  responseBytes: number;
}

export interface CostPerMillion {
  /** The REST API and the web ACL in front of it (on by default). */
  apiGateway: number;
  lambda: number;
  dynamodb: number;
  logs: number;
  /** X-Ray and data transfer out. */
  other: number;
  total: number;
  /** Log bytes per request as CloudWatch bills them (platform lines and per-event metadata included). */
  billedLogBytes: number;
}

const GB = 1024 ** 3;

export function costPerMillion(m: Measured): CostPerMillion {
  const million = 1e6;
  const apiGateway = PRICES.apiGateway.restPerMillion + PRICES.waf.perMillionRequests;
  const gbSeconds = (m.lambdaMs / 1000) * (FUNCTION_MEMORY_MB / 1024) * million;
  const lambda = m.invocations * PRICES.lambda.perMillionRequests + gbSeconds * PRICES.lambda.perGbSecond;
  const dynamodb = m.rru * PRICES.dynamodb.perMillionReadUnits + m.wru * PRICES.dynamodb.perMillionWriteUnits;
  const billedLogBytes =
    m.logBytes +
    m.logLines * PRICES.cloudWatch.logEventOverheadBytes +
    m.invocations * (LOG_PLATFORM_LINES ? LAMBDA_PLATFORM_LOG_BYTES_PER_INVOCATION : 0);
  const logs = ((billedLogBytes * million) / GB) * PRICES.cloudWatch.logsIngestionPerGb;
  const other =
    PRICES.xray.sampledFraction * PRICES.xray.perMillionTracesRecorded +
    ((m.responseBytes * million) / GB) * PRICES.dataTransfer.outPerGb;
  return {
    apiGateway,
    lambda,
    dynamodb,
    logs,
    other,
    total: apiGateway + lambda + dynamodb + logs + other,
    billedLogBytes,
  };
}

export const usd = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(2));
