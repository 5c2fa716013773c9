import { readFile } from 'node:fs/promises';
import * as v from 'valibot';
import { validate } from '#domain/validation.ts';
import { DomainError } from '#domain/errors.ts';
import { existingKey } from '#app/admin-keys.ts';
import { isRefused } from '#domain/outcome.ts';
import type { AdminCommand } from './commands.ts';
import { IntegerArg, KeyIdArg } from './args.ts';

/** One request of a key, as the console and `keys requests` show it. */
export interface RequestRow {
  time: string;
  method: string;
  path: string;
  status: number;
  error_code: string | null;
  request_id: string;
  latency_ms: number | null;
}

const Limit = v.optional(IntegerArg(1, 1000), 100);

/**
 * The local stack's request log (REQUEST_LOG_FILE, written by emulation/local/request-log.ts):
 * the rotated file, then the current one, so the newest line is last. The log is bounded, so
 * reading it whole is cheap; an absent file is an empty log.
 */
async function readLocalLog(file: string): Promise<Record<string, unknown>[]> {
  const texts = await Promise.all([`${file}.1`, file].map((f) => readFile(f, 'utf8').catch(() => '')));
  const rows: Record<string, unknown>[] = [];
  for (const line of texts.join('').split('\n')) {
    if (!line) continue;
    try {
      rows.push(JSON.parse(line));
    } catch {
      // A line cut short by a crash is skipped, not fatal.
    }
  }
  return rows;
}

export const requestCommands: Record<string, AdminCommand> = {
  /**
   * The newest requests made with a key: the local stack's request log (REQUEST_LOG_FILE), or in
   * AWS the API's access log group through Logs Insights (ACCESS_LOG_GROUP, docs/console.md).
   */
  'keys requests': async (ctx, args) => {
    const a = validate(v.strictObject({ id: KeyIdArg, limit: Limit }), args);
    if (isRefused(a)) return a;
    const key = await existingKey(ctx, a.id);
    if (isRefused(key)) return key;
    const file = process.env.REQUEST_LOG_FILE;
    const group = process.env.ACCESS_LOG_GROUP;
    if (!file && group) {
      const { queryAccessLog, ACCESS_LOG_WINDOW_HOURS } = await import('./access-log-query.ts');
      return {
        data: await queryAccessLog(group, a.id, a.limit),
        source: `access log group ${group} (last ${ACCESS_LOG_WINDOW_HOURS} hours)`,
      };
    }
    if (!file) {
      throw new DomainError(
        'service_unavailable',
        'no request log here: the local stack writes REQUEST_LOG_FILE, the admin Lambda reads ACCESS_LOG_GROUP (docs/console.md)',
        null,
      );
    }
    const id = String(a.id);
    const rows = (await readLocalLog(file)).filter((r) => r.key_id === id);
    const data: RequestRow[] = rows
      .slice(-a.limit)
      .reverse()
      .map((r) => ({
        time: String(r.time),
        method: String(r.method),
        path: String(r.path),
        status: Number(r.status),
        error_code: (r.error_code as string | null) ?? null,
        request_id: String(r.request_id),
        latency_ms: typeof r.latency_ms === 'number' ? r.latency_ms : null,
      }));
    return { data, source: 'local request log' };
  },
};
