/**
 * Load for the throughput section (bench/throughput.ts): `saturate` keeps BENCH_CONCURRENCY (16)
 * calls in flight for a while and says what each completion cost in CPU, in this process and, given
 * its pid, in DynamoDB Local's JVM (read from /proc on Linux).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
export const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
export const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? 10);

/**
 * A run: successful requests per second, failures, and CPU per successful request of the stack
 * process, of DynamoDB Local's JVM (`store`, where /proc can be read) and of the load client
 * (gateway runs).
 */
export type Run = {
  perSecond: number;
  failed: number;
  cpuMsPerRequest: number;
  storeCpuMsPerRequest?: number;
  clientCpuMsPerRequest?: number;
};

export const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

let ticksPerSecond: number | undefined;
/** CPU (user + system, every thread) that process `pid` has used so far, in ms; undefined where /proc cannot tell. */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // /proc/<pid>/stat: the fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
  } catch {
    return undefined;
  }
}

/** DynamoDB Local's CPU per completion between `before` (processCpuMs) and now. */
export const storeCpu = (pid: number | undefined, before: number | undefined, done: number) => {
  const after = processCpuMs(pid);
  return before === undefined || after === undefined ? {} : { storeCpuMsPerRequest: (after - before) / done };
};

/**
 * More failed requests than this share fails the section: its figures would say how fast the path
 * fails (a 429 is answered before the work it refuses), not how fast it serves.
 */
export const MAX_FAILED_SHARE = 0.01;

/** What a run counted: requests completed (failures included), those that failed, and its seconds. */
export interface Tally {
  done: number;
  failed: number;
  seconds: number;
}

/**
 * The answers a throughput row is about: only the requests that succeeded count, so a refusal is no
 * throughput. Throws when nothing ran or more than MAX_FAILED_SHARE of the requests failed.
 */
export function served(what: string, run: Tally): { served: number; perSecond: number } {
  if (run.done === 0) throw new Error(`${what}: no request completed in ${run.seconds.toFixed(1)} s`);
  if (run.failed / run.done > MAX_FAILED_SHARE)
    throw new Error(
      `${what}: ${run.failed} of ${run.done} requests failed (more than ${MAX_FAILED_SHARE * 100}%), so its throughput would count failures`,
    );
  const ok = run.done - run.failed;
  return { served: ok, perSecond: ok / run.seconds };
}

/**
 * Runs `one` with CONCURRENCY in flight for `seconds`: successful calls per second (`served`: it
 * throws past MAX_FAILED_SHARE failed), failures, and this process's CPU per successful call.
 */
export async function saturate(
  one: (i: number) => Promise<boolean>,
  seconds = SECONDS,
  storePid?: number,
): Promise<Run> {
  let next = 0;
  let done = 0;
  let failed = 0;
  const store = processCpuMs(storePid);
  const cpu = process.cpuUsage();
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        const ok = await one(next++);
        done++;
        if (!ok) failed++;
      }
    }),
  );
  const run = served('saturate', { done, failed, seconds: (performance.now() - started) / 1000 });
  return {
    perSecond: run.perSecond,
    failed,
    cpuMsPerRequest: cpuMs(cpu) / run.served,
    ...storeCpu(storePid, store, run.served),
  };
}
