import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger, LogFormatter, LogItem } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';
import { config } from './config.ts';

/**
 * One JSON object per line, the same shape in Lambda and on the local stack, written by
 * Powertools' Logger: `level`, `time`, `msg`, `service`, then the invocation's `request_id`,
 * `function_name`, `cold_start`, `key_id`, `store_id` (null until known; the invocation context
 * below), then the line's own fields. Never pass tokens, secrets or whole request bodies here; fields whose names
 * say they hold one are replaced by "[redacted]" all the same.
 */
const levels = { debug: 10, info: 20, warn: 30, error: 40 } as const;
type Level = keyof typeof levels;

const SECRET_FIELD = /token|secret|authorization|password|api_key/i;

class LineFormatter extends LogFormatter {
  public formatAttributes(attributes: UnformattedAttributes, additional: LogAttributes): LogItem {
    const ctx = invocationContext();
    return new LogItem({
      attributes: {
        level: attributes.logLevel.toLowerCase(),
        time: this.formatTimestamp(attributes.timestamp),
        msg: attributes.message,
        service: attributes.serviceName,
        request_id: ctx.request_id,
        function_name: ctx.function_name,
        cold_start: ctx.cold_start,
        key_id: ctx.key_id,
        store_id: ctx.store_id,
        ...(attributes.xRayTraceId ? { xray_trace_id: attributes.xRayTraceId } : {}),
      },
    }).addAttributes(additional);
  }
}

let sink: (line: string) => void = (line) => process.stdout.write(line + '\n');
let requestLogs = true;

/** Powertools' Logger, printing through our sink (stdout; the admin CLI and some tests swap it). */
class SinkLogger extends Logger {
  protected override printLog(_level: number, item: LogItem): void {
    sink(JSON.stringify(item.getAttributes()));
  }
}

let logger: Logger | undefined;
const powertools = () =>
  (logger ??= new SinkLogger({
    serviceName: process.env.POWERTOOLS_SERVICE_NAME || 'store-integration-api',
    // Levels are filtered below, from LOG_LEVEL, so that a test can change it.
    logLevel: 'DEBUG',
    logFormatter: new LineFormatter(),
  }));

export function setLogSink(fn: (line: string) => void): void {
  sink = fn;
}

/** The local server prints its own one-line request log; the Lambdas log theirs. */
export function setRequestLogging(enabled: boolean): void {
  requestLogs = enabled;
}

export function requestLoggingEnabled(): boolean {
  return requestLogs;
}

/** Query parameters whose values are credentials when a client puts one in a URL (`?access_token=`). */
const SECRET_PARAM = /token|secret|password|passwd|api_?key|^key$|signature|^sig$|authorization|^auth$|credential/i;

/** `search` (`?a=1&access_token=x`) with the values of credential-named parameters replaced. */
export function redactQuery(search: string): string {
  if (search.length <= 1) return search;
  const pairs = search
    .slice(1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      const raw = pair.slice(0, eq);
      let name = raw;
      try {
        name = decodeURIComponent(raw.replace(/\+/g, ' '));
      } catch {
        // A malformed escape: judge the name as written.
      }
      return SECRET_PARAM.test(name) ? `${raw}=[redacted]` : pair;
    });
  return `${search[0]}${pairs.join('&')}`;
}

/** Every query string inside `text` (a URL in an error message, a path) with its credentials redacted. */
function redactUrls(text: string): string {
  return text.includes('=') ? text.replace(/\?[^\s"'#<>]+/g, redactQuery) : text;
}

function redacted(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(fields).map(([k, v]) => [
      k,
      SECRET_FIELD.test(k) && v !== null && v !== undefined ? '[redacted]' : typeof v === 'string' ? redactUrls(v) : v,
    ]),
  );
}

/** Whether a line of `level` is printed (LOG_LEVEL). */
export function logs(level: Level): boolean {
  return levels[level] >= levels[config().logLevel];
}

export function log(level: Level, msg: string, fields: Record<string, unknown> = {}): void {
  if (!logs(level)) return;
  powertools()[level](redactUrls(msg), redacted(fields));
}

export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { error: err.name, error_message: err.message, stack: err.stack };
  return { error: String(err) };
}

/**
 * What every log line and metric of one invocation carries: set when the invocation starts
 * (request id, function, cold start) and filled in as it learns more (the key and store once the
 * authorizer or the delivery log named them). The request context holds them (shared/context.ts
 * `log`): a function that learns the key writes it there.
 */
export interface InvocationContext {
  request_id: string | null;
  function_name: string | null;
  cold_start: boolean | null;
  key_id: number | null;
  store_id: string | null;
  /** For the request metrics: set by the idempotency layer when it answered from storage. */
  idempotency_replay?: boolean;
}

/**
 * The one AsyncLocalStorage of the code base, and why it earns its place: it makes the request
 * context's log fields reachable from `LineFormatter` above, which Powertools' Logger calls with
 * no argument of ours. Every other dependency of a request is passed in its context; these fields
 * are not, for two reasons. A log line is written from ~60 places, many of them functions that
 * need nothing else of the request (an error mapper, a warning in a retry loop), and a line
 * without its request id would not be a wrong answer anyone sees, only a trail lost when it is
 * needed. And Logger 2.x keeps keys per invocation only on Lambda's own runtime (its
 * `InvokeStore`, when `AWS_LAMBDA_MAX_CONCURRENCY` is set): `appendKeys` is per instance, and the
 * local gateway runs many handlers concurrently in one process, where one instance's keys would
 * be every request's (docs/architecture.md, "Logging context"). The store holds the very object
 * of the request context (`withLogFields`), so the two never disagree; nothing reads it but the
 * formatter.
 */
const scope = new AsyncLocalStorage<InvocationContext>();

const empty = (): InvocationContext => ({
  request_id: null,
  function_name: null,
  cold_start: null,
  key_id: null,
  store_id: null,
});

/**
 * Runs `fn` with `fields` (a request context's `log`) as its lines' fields: the very object, so
 * what the work learns later (key, store) and adds to it is on every line after.
 */
export function withLogFields<T>(fields: InvocationContext, fn: () => T): T {
  return scope.run(fields, fn);
}

/** The fields of the invocation in progress, for the formatter; outside any, all null. */
function invocationContext(): InvocationContext {
  return scope.getStore() ?? empty();
}

/** True on the first call of each returned function: one per Lambda handler module, as Lambda's cold start. */
export function coldStartTracker(): () => boolean {
  let cold = true;
  return () => {
    const was = cold;
    cold = false;
    return was;
  };
}

/** The context of one queue message: the invocation's request id (the message id locally), key and store to come. */
export function invocation(
  record: { messageId: string },
  context: { awsRequestId?: string; functionName?: string } | undefined,
  coldStart: boolean,
): InvocationContext {
  return {
    request_id: context?.awsRequestId ?? record.messageId,
    function_name: context?.functionName ?? null,
    cold_start: coldStart,
    key_id: null,
    store_id: null,
  };
}
