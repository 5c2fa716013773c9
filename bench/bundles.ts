/**
 * Bundle size and import time of every Lambda, read from what `cdk deploy` would upload: the
 * synthesized templates in cdk.out and their asset folders (run `npx cdk synth` first, or let
 * `measureBundles` do it). Import time is the median of fresh `node` processes importing the
 * bundle, against the floor of importing the DynamoDB SDK alone (the Lambda runtime provides the
 * SDK, so bundles leave it external and import it from there).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BenchSection } from './section.ts';

export type BundleRow = { fn: string; bytes: number; importMs: number };

type Template = { Resources: Record<string, { Type: string; Properties?: { Handler?: string }; Metadata?: Record<string, string> }> };

const OUT = resolve('cdk.out');
const RUNS = 5;

/** The functions of every synthesized stack: logical id (without its hash) and bundle file. */
function lambdaBundles(): Array<{ fn: string; file: string }> {
  const found: Array<{ fn: string; file: string }> = [];
  for (const name of readdirSync(OUT).filter((f) => f.endsWith('.template.json'))) {
    const template = JSON.parse(readFileSync(join(OUT, name), 'utf8')) as Template;
    for (const [id, resource] of Object.entries(template.Resources)) {
      const asset = resource.Metadata?.['aws:asset:path'];
      if (resource.Type !== 'AWS::Lambda::Function' || !asset) continue;
      const module = (resource.Properties?.Handler ?? 'index.handler').split('.')[0];
      const file = ['.mjs', '.js'].map((ext) => join(OUT, asset, `${module}${ext}`)).find(existsSync);
      if (file) found.push({ fn: id.replace(/[0-9A-F]{8}$/, ''), file });
    }
  }
  return found;
}

/** Median wall time of importing `specifiers` in a fresh node process, in ms. */
function importMs(specifiers: string[]): number {
  const code =
    `const t = performance.now();` +
    specifiers.map((s) => `await import(${JSON.stringify(s)});`).join('') +
    `process.stdout.write(String(performance.now() - t));`;
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
      encoding: 'utf8',
      env: { ...process.env, TABLE_NAME: 'bench', AWS_REGION: 'eu-west-1', LOG_LEVEL: 'silent' },
    });
    if (run.status !== 0) throw new Error(`importing ${specifiers.join(', ')} failed: ${run.stderr}`);
    times.push(Number(run.stdout));
  }
  return times.sort((a, b) => a - b)[Math.floor(RUNS / 2)] as number;
}

export function measureBundles(options: { synth: boolean }): { floorMs: number; rows: BundleRow[] } {
  if (options.synth || !existsSync(OUT)) execFileSync('npx', ['cdk', 'synth', '--quiet'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const floorMs = importMs(['@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb']);
  const rows = lambdaBundles().map(({ fn, file }) => ({ fn, bytes: statSync(file).size, importMs: importMs([pathToFileURL(file).href]) }));
  return { floorMs, rows };
}

function bundleTable({ floorMs, rows }: ReturnType<typeof measureBundles>): string {
  const lines = rows.map((r) => `| ${r.fn} | ${(r.bytes / 1024).toFixed(0)} | ${r.importMs.toFixed(0)} | ${(r.importMs - floorMs).toFixed(0)} |`);
  return (
    `## Lambda bundles\n\nWhat \`cdk deploy\` uploads (cdk.out, minified ESM, SDK external); import = median of ${RUNS} fresh node processes; ` +
    `SDK floor (client-dynamodb + lib-dynamodb): ${floorMs.toFixed(0)} ms\n\n` +
    '| function | KB | import ms | over the SDK floor ms |\n|---|---|---|---|\n' +
    lines.join('\n') +
    '\n'
  );
}

/** Synthesizes the app (BENCH_SYNTH=false reuses cdk.out) and measures what it would upload. */
export const bundlesSection: BenchSection = {
  name: 'bundles',
  run: async () => bundleTable(measureBundles({ synth: process.env.BENCH_SYNTH !== 'false' })),
};
