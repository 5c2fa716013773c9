/**
 * Bundle size and import time of every Lambda, read from what `cdk deploy` would upload: the
 * synthesized templates in cdk.out and their asset folders (run `npx cdk synth` first, or let
 * `measureBundles` do it). Size is the bundle the handler loads; its source map is a separate
 * file, uploaded but read only when an error's stack is printed (shared/stack-traces.ts).
 *
 * Import time is measured in fresh `node` processes, each importing the DynamoDB SDK (the floor:
 * the Lambda runtime provides the SDK, so bundles leave it external and import it from there) and
 * then the bundle: "over the floor" is what the bundle adds once the SDK is loaded, measured in the
 * same process, so node's start-up and load that comes and goes on a shared machine do not land
 * on one side only. Wall time is what a cold start waits; CPU time (user + system) is what the
 * import itself costs and moves less when other processes share the cores.
 *
 * Four reference rows, bundled the same way (infra/bundling.ts) but not deployed, say what part
 * of a time is ours: an empty module (what loading any bundle costs), the official MCP SDK alone
 * (the least the MCP function can import in), the MCP function without its tools (the SDK and
 * the HTTP layer every API function has: what no split of the tools could go below) and
 * Powertools Tracer alone (what the webhook signer loads at its first sampled invocation).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { lambdaEsbuildOptions } from '#infra/bundling.ts';
import { lambdaBundles } from './lambda-bundles.ts';
import { MCP_OPENING, mcpEvent, modernMessage } from './mcp-event.ts';
import { type McpTable, startMcpTable } from './mcp-table.ts';
import type { BenchSection } from './section.ts';

type Timing = { wallMs: number; cpuMs: number };
export type BundleRow = { fn: string; bytes: number; import: Timing; overFloor: Timing };

/** BENCH_CDK_OUT measures another assembly (e.g. `npx cdk synth -o cdk.out.before` on an older commit) with BENCH_SYNTH=false. */
const OUT = resolve(process.env.BENCH_CDK_OUT ?? 'cdk.out');
const RUNS = Number(process.env.BENCH_IMPORT_RUNS ?? 7);
const FLOOR = ['@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb'];

type Run = { floor: Timing; overFloor: Timing };

/**
 * The node that imports the bundles: BENCH_NODE, or the one running the bench, which `npm run` makes
 * the functions' major (docs/local.md#node). Another major measures that one's loader, which
 * differs: on Node 22 an ES import of node:http loads undici, ~25 ms that Node 20 never showed
 * (infra/node-http.ts).
 */
const NODE = process.env.BENCH_NODE ?? process.execPath;
const nodeVersion = () => execFileSync(NODE, ['--version'], { encoding: 'utf8' }).trim();

/** Runs `code` (an ES module) in a fresh node process with the function's NODE_OPTIONS and environment; its stdout. */
function runFresh(code: string, nodeOptions: string, what: string, env: Record<string, string> = {}): string {
  const run = spawnSync(NODE, ['--input-type=module', '-e', code], {
    encoding: 'utf8',
    env: {
      ...process.env,
      NODE_OPTIONS: nodeOptions,
      // As the Lambda runtime sets it: only there does the signer load its X-Ray tracer, at the first
      // sampled invocation, not at import (functions/webhooks/tracing.ts).
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
      TABLE_NAME: 'bench',
      AWS_REGION: 'eu-west-1',
      LOG_LEVEL: 'warn',
      ...env,
    },
  });
  if (run.status !== 0) throw new Error(`${what} failed: ${run.stderr}`);
  return run.stdout;
}

const floorImports = FLOOR.map((s) => `await import(${JSON.stringify(s)});`).join('');

/** One fresh node process: the floor's import, then what importing `bundle` adds to it. */
function importRun(bundle: string, nodeOptions: string): Run {
  const mark = `[performance.now(), process.cpuUsage()]`;
  const since = (m: string) =>
    `{ wallMs: performance.now() - ${m}[0], cpuMs: (process.cpuUsage(${m}[1]).user + process.cpuUsage(${m}[1]).system) / 1000 }`;
  const code =
    `const a = ${mark};` +
    floorImports +
    `const floor = ${since('a')}; const b = ${mark};` +
    `await import(${JSON.stringify(pathToFileURL(bundle).href)});` +
    `const overFloor = ${since('b')};` +
    `process.stdout.write(JSON.stringify({ floor, overFloor }));`;
  return JSON.parse(runFresh(code, nodeOptions, `importing ${bundle}`)) as Run;
}

/**
 * What an import time leaves out: the MCP function's first requests in a fresh process, after the
 * floor and its import (wall ms each), as a client of each era opens: on 2025, initialize,
 * tools/list and initialize again; on 2026-07-28, server/discover, tools/list and server/discover
 * again. The first request pays what a container does once (Node's fetch classes, the protocol
 * schemas it needs, the tool list's JSON Schemas); the repeat is a warm request.
 */
function mcpFirstRequestsRun(bundle: string, nodeOptions: string, table: McpTable, era: Era): number[] {
  const events = openingOf(era).map(({ message, headers }) => mcpEvent(JSON.stringify(message), table, headers));
  const code =
    floorImports +
    `const { handler } = await import(${JSON.stringify(pathToFileURL(bundle).href)});` +
    'const times = [];' +
    `for (const event of ${JSON.stringify(events)}) {` +
    '  const t = performance.now(); const answer = await handler(event, {}); times.push(performance.now() - t);' +
    "  if (answer.statusCode !== 200) throw new Error('answered ' + answer.statusCode + ': ' + answer.body);" +
    '}' +
    "process.stdout.write('\\nFIRST ' + JSON.stringify(times) + '\\n');";
  const line = runFresh(code, nodeOptions, `the first requests of ${bundle}`, table.env)
    .split('\n')
    .find((l) => l.startsWith('FIRST '));
  if (!line) throw new Error(`the first requests of ${bundle} printed no times`);
  return JSON.parse(line.slice('FIRST '.length)) as number[];
}

type Era = '2025' | '2026-07-28';
const ERAS: readonly Era[] = ['2025', '2026-07-28'];

/** The three requests a client of `era` opens with, as in mcpFirstRequestsRun. */
function openingOf(era: Era): Array<{ message: object; headers?: Record<string, string> }> {
  if (era === '2025') {
    const { initialize, toolsList } = MCP_OPENING;
    return [{ message: initialize }, { message: toolsList }, { message: initialize }];
  }
  return [modernMessage(1, 'server/discover'), modernMessage(2, 'tools/list'), modernMessage(3, 'server/discover')];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const medianTiming = (ts: Timing[]): Timing => ({
  wallMs: median(ts.map((t) => t.wallMs)),
  cpuMs: median(ts.map((t) => t.cpuMs)),
});
const plus = (a: Timing, b: Timing): Timing => ({ wallMs: a.wallMs + b.wallMs, cpuMs: a.cpuMs + b.cpuMs });

const REFERENCES = [
  { fn: '(reference) empty module', entry: 'bench/reference/empty.ts' },
  { fn: '(reference) MCP SDK alone', entry: 'bench/reference/mcp-sdk.ts' },
  { fn: '(reference) MCP function without its tools', entry: 'bench/reference/mcp-without-tools.ts' },
  { fn: '(reference) Powertools Tracer alone', entry: 'bench/reference/tracer.ts' },
];

/** The reference modules, bundled as the Lambdas are, into OUT (inside the repository, so `@aws-sdk/*` resolves from node_modules as from the runtime). */
async function referenceBundles(
  nodeOptions: string,
): Promise<Array<{ fn: string; file: string; nodeOptions: string }>> {
  return Promise.all(
    REFERENCES.map(async ({ fn, entry }) => {
      const file = resolve(OUT, 'bench-reference', entry.replace(/^.*\/|\.ts$/g, ''), 'index.mjs');
      await build({ ...lambdaEsbuildOptions(), entryPoints: [entry], outfile: file, logLevel: 'error' });
      return { fn, file, nodeOptions };
    }),
  );
}

export async function measureBundles(options: {
  synth: boolean;
}): Promise<{ floor: Timing; rows: BundleRow[]; mcpFirstRequests: Record<Era, number[]> | undefined }> {
  if (options.synth || !existsSync(OUT))
    execFileSync('npx', ['cdk', 'synth', '--quiet', '-o', OUT], { stdio: ['ignore', 'ignore', 'inherit'] });
  const functions = lambdaBundles(OUT);
  const bundles = [...functions, ...(await referenceBundles(functions[0]?.nodeOptions ?? ''))];
  const floors: Timing[] = [];
  const rows = bundles.map(({ fn, file, nodeOptions }) => {
    const runs = Array.from({ length: RUNS }, () => importRun(file, nodeOptions));
    floors.push(...runs.map((r) => r.floor));
    return {
      fn,
      bytes: statSync(file).size,
      import: medianTiming(runs.map((r) => plus(r.floor, r.overFloor))),
      overFloor: medianTiming(runs.map((r) => r.overFloor)),
    };
  });
  const mcp = functions.find((f) => f.fn === 'McpFunction');
  const table = mcp ? await startMcpTable() : undefined;
  const firstRuns: Record<Era, number[][]> = { '2025': [], '2026-07-28': [] };
  try {
    if (mcp && table)
      for (const era of ERAS)
        firstRuns[era] = Array.from({ length: RUNS }, () => mcpFirstRequestsRun(mcp.file, mcp.nodeOptions, table, era));
  } finally {
    await table?.stop();
  }
  const medians = (runs: number[][]) => [0, 1, 2].map((i) => median(runs.map((r) => r[i] as number)));
  const mcpFirstRequests = mcp
    ? { '2025': medians(firstRuns['2025']), '2026-07-28': medians(firstRuns['2026-07-28']) }
    : undefined;
  return { floor: medianTiming(floors), rows, mcpFirstRequests };
}

function bundleTable({ floor, rows, mcpFirstRequests }: Awaited<ReturnType<typeof measureBundles>>): string {
  const ms = (x: number) => x.toFixed(0);
  const lines = rows.map(
    (r) =>
      `| ${r.fn} | ${(r.bytes / 1024).toFixed(0)} | ${ms(r.import.wallMs)} | ${ms(r.overFloor.wallMs)} | ${ms(r.import.cpuMs)} | ${ms(r.overFloor.cpuMs)} |`,
  );
  return (
    `## Lambda bundles\n\nWhat \`cdk deploy\` uploads (cdk.out, minified ESM, SDK external; KB = the handler's .mjs, its source map is a separate file, read only when a stack is printed: shared/stack-traces.ts). ` +
    `Import times: medians of ${RUNS} fresh node ${nodeVersion()} processes per function (BENCH_NODE picks another node), each importing the SDK floor ` +
    `(client-dynamodb + lib-dynamodb: ${ms(floor.wallMs)} ms wall, ${ms(floor.cpuMs)} ms CPU) and then the bundle; "over" is what the bundle adds in that process. ` +
    'The reference rows are bundled the same way and not deployed: an empty module (what loading any bundle costs), the official MCP SDK alone (the least the MCP function can import in), the MCP function without its tools (bench/reference/mcp-without-tools.ts: the SDK and the HTTP layer of every API function, the least a split that loaded the tools later could import) and Powertools Tracer alone (what the webhook signer loads at its first invocation that X-Ray samples, not at import: functions/webhooks/tracing.ts). ' +
    'SDK clients a function needs only on some paths load at their first use and are not in these figures: SQS (the fan-out at its first delivery to queue, the signer for a retry or a probe), KMS, SNS and CloudWatch Logs. Nor is the page sanitizer (sanitize-html, htmlparser2, entities): Content and MCP load it with the first page body they clean (shared/domain/page/page-write.ts).\n\n' +
    '| function | KB | import ms | over the SDK floor ms | import CPU ms | over the floor CPU ms |\n|---|---|---|---|---|---|\n' +
    lines.join('\n') +
    '\n' +
    (mcpFirstRequests
      ? `\nWhat an import leaves to the first request: the MCP function, after its import in such a process, answers a 2025 client's first initialize in ${ms(mcpFirstRequests['2025'][0] as number)} ms, then tools/list in ${ms(mcpFirstRequests['2025'][1] as number)} ms, and initialize again in ${ms(mcpFirstRequests['2025'][2] as number)} ms; a 2026-07-28 client's first server/discover in ${ms(mcpFirstRequests['2026-07-28'][0] as number)} ms, then tools/list in ${ms(mcpFirstRequests['2026-07-28'][1] as number)} ms, and server/discover again in ${ms(mcpFirstRequests['2026-07-28'][2] as number)} ms (medians of ${RUNS} fresh processes each, wall). Each of these requests also makes one DynamoDB call, the conditional write that counts set-up against its own limit on the key's token item (functions/mcp/allowance.ts), here to DynamoDB Local in memory in a process whose connection to it is new, so a repeat is not the function's CPU alone. The first request loads Node's fetch classes (the SDK takes a web Request) and builds the protocol schemas it needs (infra/mcp-sdk.ts builds them at their first use); the first tools/list builds the response shapes and converts the tools' schemas to JSON Schema (functions/mcp/tool-schemas.ts), once per container.\n`
      : '')
  );
}

/** Synthesizes the app (BENCH_SYNTH=false reuses cdk.out) and measures what it would upload. */
export const bundlesSection: BenchSection = {
  name: 'bundles',
  run: async () => bundleTable(await measureBundles({ synth: process.env.BENCH_SYNTH !== 'false' })),
};
