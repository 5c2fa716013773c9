/**
 * One access log line as API Gateway writes it from the stage's `AccessLogSetting.Format`: each
 * `$context.*` variable the rehearsal knows is replaced by its value, any other by `-`, which is
 * what API Gateway writes for a value it does not have. Values are JSON-escaped so that a JSON
 * format (ours, infra/access-log-fields.ts) stays one parseable line.
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-variables-for-access-logging.html
 */
export interface AccessLogRequest {
  requestId: string;
  startedAt: Date;
  latencyMs: number;
  sourceIp: string;
  userAgent: string | undefined;
  httpMethod: string;
  resourcePath: string | undefined;
  /** With the stage prefix, as API Gateway's `$context.path` has it. */
  path: string;
  status: number;
  responseLength: number;
  authorizer: Record<string, unknown>;
  /** The gateway response type when API Gateway answered itself. */
  errorType: string | undefined;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number) => String(n).padStart(2, '0');

/** `$context.requestTime`: `25/Nov/2026:04:37:31 +0000`. */
export function requestTime(d: Date): string {
  return `${two(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`;
}

export function renderAccessLog(format: string, r: AccessLogRequest): string {
  const known: Record<string, unknown> = {
    requestId: r.requestId,
    extendedRequestId: r.requestId,
    requestTime: requestTime(r.startedAt),
    requestTimeEpoch: r.startedAt.getTime(),
    'identity.sourceIp': r.sourceIp,
    'identity.userAgent': r.userAgent,
    httpMethod: r.httpMethod,
    resourcePath: r.resourcePath,
    path: r.path,
    status: r.status,
    responseLength: r.responseLength,
    responseLatency: r.latencyMs,
    'error.responseType': r.errorType,
  };
  return format.replace(/\$context\.([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)/g, (_m, name: string) => {
    const authorizerKey = /^authorizer\.(\w+)$/.exec(name)?.[1];
    const value =
      authorizerKey && !['status', 'latency', 'integrationStatus', 'integrationLatency'].includes(authorizerKey)
        ? r.authorizer[authorizerKey]
        : known[name];
    return value === undefined || value === null || value === '' ? '-' : JSON.stringify(String(value)).slice(1, -1);
  });
}
