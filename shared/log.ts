import { config } from './config.ts';

/**
 * One JSON object per line, with the request id on every line of a request. Never pass tokens,
 * secrets or whole request bodies here.
 */
const levels = { debug: 10, info: 20, warn: 30, error: 40 } as const;
type Level = keyof typeof levels;

let sink: (line: string) => void = (line) => process.stdout.write(line + '\n');
let requestLogs = true;

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

export function log(level: Level, msg: string, fields: Record<string, unknown> = {}): void {
  if (levels[level] < levels[config().logLevel]) return;
  sink(JSON.stringify({ level, time: new Date().toISOString(), msg, ...fields }));
}

export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { error: err.name, error_message: err.message, stack: err.stack };
  return { error: String(err) };
}
