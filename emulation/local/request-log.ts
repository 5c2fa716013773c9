import { appendFile, rename, stat } from 'node:fs/promises';

/**
 * The local stack's request log: one JSON line per request, under the field names of the API's
 * access log in AWS (infra/access-log-fields.ts) plus `error_code`,
 * which only the local gateway can read from the answer. The admin command `keys requests`
 * reads it (functions/admin/request-commands.ts). Bounded: past MAX_BYTES the file becomes `.1`
 * (replacing the previous `.1`), so at most two files of about 1 MiB (some 5,000 requests each).
 */
export interface RequestLogEntry {
  request_id: string;
  time: string;
  method: string;
  path: string;
  status: number;
  latency_ms: number;
  key_id: string | null;
  store_id: string | null;
  error_code: string | null;
}

export const REQUEST_LOG_MAX_BYTES = 1024 * 1024;

export function requestLogWriter(file: string, maxBytes = REQUEST_LOG_MAX_BYTES) {
  let size: number | undefined;
  // Appends run one after another, so a rotation never interleaves with a write.
  let chain: Promise<void> = Promise.resolve();
  const write = (entry: RequestLogEntry) => {
    const line = JSON.stringify(entry) + '\n';
    chain = chain
      .then(async () => {
        size ??= await stat(file).then(
          (s) => s.size,
          () => 0,
        );
        if (size > 0 && size + line.length > maxBytes) {
          await rename(file, `${file}.1`);
          size = 0;
        }
        await appendFile(file, line, { mode: 0o600 });
        size += Buffer.byteLength(line);
      })
      // A log that cannot be written never fails a request; the next write tries again.
      .catch(() => {
        size = undefined;
      });
  };
  return { write, flushed: () => chain };
}

/** The contract error code of an answer body, if it is one (`{code, message, field}`). */
export function errorCodeOf(status: number, body: unknown): string | null {
  if (status < 400 || body === undefined || body === null) return null;
  try {
    const parsed = typeof body === 'string' || Buffer.isBuffer(body) ? JSON.parse(body.toString()) : body;
    return typeof parsed?.code === 'string' ? parsed.code : null;
  } catch {
    return null;
  }
}
