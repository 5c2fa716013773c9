/**
 * `cdk synth` into a directory, offline: the CLI with notices, version check and telemetry off.
 * Bundling runs esbuild locally (no Docker). `app` defaults to cdk.json's.
 */
import { spawn } from 'node:child_process';

export async function synthesize(options: {
  outDir: string;
  app?: string;
  context?: Record<string, string>;
  cwd?: string;
  /**
   * false: without CDK's built-in CloudFormation validation (CDK_VALIDATION=false), for a test
   * that runs the bundles; half a synthesis's CPU. cdk-nag still runs.
   */
  validation?: boolean;
}): Promise<void> {
  const args = ['cdk', 'synth', '--quiet', '--no-notices', '--no-version-reporting', '-o', options.outDir];
  if (options.app) args.push('--app', options.app);
  for (const [k, v] of Object.entries(options.context ?? {})) args.push('-c', `${k}=${v}`);
  const child = spawn('npx', args, {
    cwd: options.cwd ?? process.cwd(),
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      CDK_DISABLE_VERSION_CHECK: '1',
      CDK_DISABLE_CLI_TELEMETRY: 'true',
      ...(options.validation === false ? { CDK_VALIDATION: 'false' } : {}),
    },
  });
  let output = '';
  child.stdout.on('data', (d) => (output = (output + d).slice(-8000)));
  child.stderr.on('data', (d) => (output = (output + d).slice(-8000)));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`cdk synth failed (exit ${code}):\n${output}`);
}
