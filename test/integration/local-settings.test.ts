import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '#fixtures/free-port.ts';

/** The variables this worker points at the run's stack (test/fixtures/env.ts): a user's shell has none of them. */
const STACK_VARIABLES = [
  'DYNAMODB_ENDPOINT',
  'TABLE_NAME',
  'LOG_LEVEL',
  'WEBHOOK_RETRY_SCHEDULE',
  'WEBHOOK_SECRET_KEY_FILE',
  'REQUEST_LOG_FILE',
  'ALLOW_PRIVATE_WEBHOOKS',
];

/** How long a start may run before the test stops it: a guard against a hang, not a measurement. */
const GUARD_MS = 90_000;

const dataDirs: string[] = [];
afterAll(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * `npm start` in its own process group, on free ports and its own DATA_DIR, with `settings` added;
 * stopped (the group, JVM included) if it still runs after GUARD_MS.
 */
async function npmStart(settings: Record<string, string>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'local-settings-'));
  dataDirs.push(dataDir);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(await freePort()),
    DYNAMODB_PORT: String(await freePort()),
    DATA_DIR: dataDir,
  };
  for (const name of Object.keys(env))
    if (STACK_VARIABLES.includes(name) || /^npm_config_(loglevel|silent|quiet)$/i.test(name)) delete env[name];
  Object.assign(env, settings);
  const child = spawn('npm', ['start'], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  let stoppedByGuard = false;
  const guard = setTimeout(() => {
    stoppedByGuard = true;
    process.kill(-child.pid!, 'SIGKILL');
  }, GUARD_MS);
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  clearTimeout(guard);
  return { code, stdout, stderr, stoppedByGuard, storeStarted: existsSync(join(dataDir, 'dynamodb')) };
}

describe('npm start with a bad setting', () => {
  it.each([
    [{ RATE_LIMIT_PER_MINUTE: '100000' }, /RATE_LIMIT_PER_MINUTE must be an integer between 1 and 1000, got "100000"/],
    [{ PORT: 'http' }, /PORT must be an integer between 0 and 65535, got "http"/],
    [{ DYNAMODB_PORT: '99999' }, /DYNAMODB_PORT must be an integer between 1 and 65535, got "99999"/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL "loud" is not one of debug, info, warn, error/],
    [{ TABLE_NAME: 'my table' }, /TABLE_NAME must be 3 to 255 letters, digits/],
    [{ WEBHOOK_RETRY_SCHEDULE: 'soon' }, /WEBHOOK_RETRY_SCHEDULE must be comma-separated whole seconds, got "soon"/],
    [{ DYNAMODB_ENDPOINT: '127.0.0.1:8000' }, /DYNAMODB_ENDPOINT must be an http:\/\/ or https:\/\/ URL/],
  ])('%j: stops before starting anything, naming the setting and what it must be', async (settings, message) => {
    const out = await npmStart(settings);
    expect(out.stoppedByGuard, `still running after ${GUARD_MS} ms:\n${out.stdout}${out.stderr}`).toBe(false);
    expect(out.code).not.toBe(0);
    const lines = out.stderr
      .trim()
      .split('\n')
      .filter((l) => !l.includes('Warning'));
    expect(lines, out.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^bad setting: /);
    expect(lines[0]).toMatch(message);
    expect(out.stderr).not.toMatch(/endpoint did not answer/);
    // Nothing was started: no DynamoDB Local (it makes its directory under DATA_DIR), no gateway.
    expect(out.storeStarted).toBe(false);
    expect(out.stdout).toBe('');
  });
});
