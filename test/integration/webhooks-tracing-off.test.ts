import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { tracingWanted } from '#functions/webhooks/tracing.ts';

/**
 * The X-Ray SDK installs async hooks as it loads (cls-hooked), and they track every promise of
 * the process, so outside Lambda the signer must not load it at all: the local stack, the tests
 * and the bench run the signer in the process that serves the API (functions/webhooks/tracing.ts).
 */

/**
 * Imports the signer in a fresh node process with `env`, then invokes it once per entry of
 * `sampled`, each with the trace header Lambda would set for it (`Sampled=1` or `Sampled=0`).
 * Says whether the X-Ray SDK was loaded after the import and after each invocation.
 */
function xraySdkLoaded(env: Record<string, string>, sampled: number[] = []): boolean[] {
  const script =
    "import { createRequire } from 'node:module';" +
    "const { handler } = await import('./functions/webhooks/handler.ts');" +
    'const cache = createRequire(import.meta.url).cache;' +
    "const loaded = () => Object.keys(cache).some((f) => f.includes('/aws-xray-sdk-core/'));" +
    'const seen = [loaded()];' +
    `for (const s of ${JSON.stringify(sampled)}) {` +
    "  process.env._X_AMZN_TRACE_ID = 'Root=1-67a0c1d2-0123456789abcdef01234567;Parent=53995c3f42cd8ad8;Sampled=' + s;" +
    '  await handler({ Records: [] });' +
    '  seen.push(loaded());' +
    '}' +
    'process.stdout.write(JSON.stringify(seen));';
  const {
    AWS_EXECUTION_ENV: _execution,
    POWERTOOLS_TRACE_ENABLED: _enabled,
    _X_AMZN_TRACE_ID: _trace,
    ...rest
  } = process.env;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: process.cwd(),
    encoding: 'utf8',
    env: { ...rest, TABLE_NAME: 'tracing-off', AWS_REGION: 'eu-west-1', LOG_LEVEL: 'warn', ...env },
  });
  return JSON.parse(out) as boolean[];
}

const LAMBDA = { AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x' };

describe('webhooks: the X-Ray SDK only where it traces', () => {
  it('is loaded in Lambda by the first sampled invocation, not at import nor by an unsampled one', () => {
    expect(xraySdkLoaded(LAMBDA, [0, 0, 1, 0])).toEqual([false, false, false, true, true]);
  });

  it('is never loaded outside Lambda, nor with POWERTOOLS_TRACE_ENABLED=false', () => {
    expect(xraySdkLoaded({}, [1])).toEqual([false, false]);
    expect(xraySdkLoaded({ ...LAMBDA, POWERTOOLS_TRACE_ENABLED: 'false' }, [1])).toEqual([false, false]);
  });

  it("follows Tracer's own rule for when it traces", () => {
    expect(tracingWanted({})).toBe(false);
    expect(tracingWanted({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x' })).toBe(true);
    expect(tracingWanted({ AWS_EXECUTION_ENV: 'AWS_Lambda_amplify-mock' })).toBe(false);
    expect(tracingWanted({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x', AWS_SAM_LOCAL: 'true' })).toBe(false);
    expect(tracingWanted({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x', POWERTOOLS_TRACE_ENABLED: 'FALSE' })).toBe(
      false,
    );
  });
});
