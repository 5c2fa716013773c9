import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/**
 * `npm test`: every gate and every vitest project, in three lanes that run side by side (why, and
 * what it saved: docs/testing.md, "npm test in three lanes").
 * - main: `vitest run` of unit, lint, integration and infra, its output as it comes (not timing:
 *   docs/testing.md, "Timed tests");
 * - load: `vitest run --project load`, whose files run one at a time on a stack of their own;
 * - gates: Biome, the import-alias check and `tsc --noEmit`, then the rehearsal.
 * A lane stops at its first failing step, the others go on; `npm test` fails if any step failed.
 * The load and gates lanes' output is held and printed whole after the main lane's, so that no two
 * reporters interleave, then one line per step with its result and time.
 */
type Step = { label: string; bin: string; args: string[] };
type Lane = { name: string; live: boolean; steps: Step[] };
type Outcome = { lane: string; label: string; code: number | null; seconds: number };

const vitest = (label: string, ...args: string[]): Step => ({ label, bin: 'vitest', args: ['run', ...args] });
const lanes: Lane[] = [
  {
    name: 'main',
    live: true,
    steps: [
      vitest(
        'vitest run (unit, lint, integration, infra)',
        ...['unit', 'lint', 'integration', 'infra'].flatMap((p) => ['--project', p]),
      ),
    ],
  },
  { name: 'load', live: false, steps: [vitest('vitest run --project load', '--project', 'load')] },
  {
    name: 'gates',
    live: false,
    steps: [
      { label: 'biome ci', bin: 'biome', args: ['ci', '--error-on-warnings', '.'] },
      { label: 'import-alias check', bin: 'tsx', args: ['scripts/rewrite-imports.ts', '--check'] },
      { label: 'tsc --noEmit', bin: 'tsc', args: ['--noEmit'] },
      vitest('rehearsal', '--config', 'vitest.rehearsal.config.ts'),
    ],
  },
];

const root = path.resolve(import.meta.dirname, '..');
const running = new Set<ChildProcess>();
let interrupted = false;
// The held lanes' output is piped, not a terminal: keep the reporters' colours when ours is one.
const env = process.stdout.isTTY ? { ...process.env, FORCE_COLOR: '1' } : process.env;

function run(step: Step, live: boolean, held: Buffer[]): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(path.join(root, 'node_modules/.bin', step.bin), step.args, {
      cwd: root,
      env,
      stdio: live ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    });
    running.add(child);
    child.stdout?.on('data', (chunk: Buffer) => held.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => held.push(chunk));
    child.once('error', (error) => held.push(Buffer.from(`${step.label}: ${error.message}\n`)));
    child.once('close', (code, signal) => {
      running.delete(child);
      resolve(signal ? null : code);
    });
  });
}

function describe(o: Outcome): string {
  const result = o.code === 0 ? 'passed' : o.code === null ? 'stopped' : `FAILED (exit ${o.code})`;
  return `${o.label.padEnd(30)} ${result.padEnd(16)} ${o.seconds.toFixed(0)} s`;
}

async function runLane(lane: Lane): Promise<{ outcomes: Outcome[]; held: Buffer[] }> {
  const outcomes: Outcome[] = [];
  const held: Buffer[] = [];
  for (const step of lane.steps) {
    if (interrupted) break;
    const started = performance.now();
    const code = await run(step, lane.live, held);
    const outcome = { lane: lane.name, label: step.label, code, seconds: (performance.now() - started) / 1000 };
    outcomes.push(outcome);
    // A held step's output waits for the end; a line now says how far the run is.
    if (!lane.live) process.stdout.write(`[${lane.name}] ${describe(outcome)} (output at the end)\n`);
    if (code !== 0) break;
  }
  return { outcomes, held };
}

// Interrupted, the steps stop too (a terminal's Ctrl-C reaches them itself; a SIGTERM does not).
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    interrupted = true;
    for (const child of running) child.kill(signal);
    process.exitCode = 130;
  });
}

const started = performance.now();
const results = await Promise.all(lanes.map(runLane));
for (const [i, { held }] of results.entries()) {
  if (lanes[i]?.live) continue;
  process.stdout.write(`\n──── lane ${lanes[i]?.name} ────\n`);
  process.stdout.write(Buffer.concat(held));
}
process.stdout.write('\n──── npm test ────\n');
let failed = false;
for (const { outcomes } of results) {
  for (const o of outcomes) {
    failed ||= o.code !== 0;
    process.stdout.write(`${o.lane.padEnd(6)} ${describe(o)}\n`);
  }
}
const skipped = lanes.flatMap((lane, i) => lane.steps.slice(results[i]?.outcomes.length).map((s) => s.label));
if (skipped.length)
  process.stdout.write(`not run (interrupted, or an earlier step of its lane failed): ${skipped.join(', ')}\n`);
process.stdout.write(`${failed ? 'FAILED' : 'passed'} in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
if (failed) process.exitCode ||= 1;
