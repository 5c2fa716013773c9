import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { cdkContext, documentedCommands, kindOf, ROOT } from '#fixtures/doc-commands.ts';

/**
 * Every `npx cdk synth` / `npx cdk deploy` that README.md and docs/ show, synthesized as the CLI
 * does it (test/fixtures/synth-as-cli.ts, in a process of its own): the app of bin/app.ts
 * (defineStacks, with cdk-nag's packs) in an App holding cdk.json's context and the command's
 * `-c` values. A deploy synthesizes first, and cdk-nag fails it there, so a synthesis that passes
 * here is a deploy that gets past synth. CDK's built-in CloudFormation validation runs too, as in
 * the CLI, and any finding of it fails here although the CLI only warns (the other synthesizing
 * tests leave it off: test/infra/synth.ts). Bundling is skipped: it does not change what either
 * reads (test/infra/bundles.test.ts builds the bundles).
 *
 * Besides the documented commands, one synthesis flips every switch of the context table away from
 * its default at once (the e-mail subscription on, the web ACL off, ...), since a finding hides in
 * a resource only a non-default value creates: issue 44's SNS subscription without a redrive
 * policy appeared only with `-c alarmEmail=...`.
 */
const run = promisify(execFile);

const cdkJson = JSON.parse(readFileSync(path.join(ROOT, 'cdk.json'), 'utf8')) as {
  app: string;
  context: Record<string, unknown>;
};

const EVERY_SWITCH_FLIPPED = {
  alarmEmail: 'ops@example.com',
  waf: 'false',
  detailedMetrics: 'true',
  authorizerConcurrency: '0',
  signerConcurrency: '0',
};

/** What `cdk synth -c name=value ...` reports: '' when it passes, else the error (cdk-nag's report). */
async function synthAsCli(context: Record<string, string>): Promise<string> {
  try {
    await run(process.execPath, ['--import', 'tsx', 'test/fixtures/synth-as-cli.ts', JSON.stringify(context)], {
      cwd: ROOT,
      maxBuffer: 64 * 1024 * 1024,
    });
    return '';
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    return e.stdout || e.stderr || e.message;
  }
}

const cdkCommands = documentedCommands().filter((c) => kindOf(c.text) === 'cdk');
/** Each distinct context set once: a synthesis takes tens of seconds on a loaded machine. */
const contextSets = [
  ...new Map(
    [
      ...cdkCommands.map((c) => ({ context: cdkContext(c.text), where: c.where })),
      { context: EVERY_SWITCH_FLIPPED, where: 'every switch flipped' },
    ].map((s) => [JSON.stringify(Object.entries(s.context).sort()), s]),
  ).values(),
];

describe('the documented deploy', () => {
  it('is the app cdk.json runs', () => {
    expect(cdkJson.app).toBe('npx tsx bin/app.ts');
    expect(readFileSync(path.join(ROOT, 'bin/app.ts'), 'utf8')).toContain('defineStacks(new App());');
    expect(cdkCommands.map((c) => c.text)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^npx cdk synth\b/), expect.stringMatching(/^npx cdk deploy\b/)]),
    );
  });

  it.each(contextSets)(
    'synthesizes with cdk-nag and the CloudFormation validation finding nothing: $where $context',
    async ({ context }) => {
      expect(await synthAsCli(context)).toBe('');
    },
    600_000,
  );
});
