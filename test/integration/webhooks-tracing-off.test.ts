import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { tracingWanted } from '#functions/webhooks/tracing.ts';

/**
 * The X-Ray SDK installs async hooks as it loads (cls-hooked), and they track every promise of
 * the process, so outside Lambda the signer must not load it at all: the local stack, the tests
 * and the bench run the signer in the process that serves the API (functions/webhooks/tracing.ts).
 */

/** Imports the signer in a fresh node process with `env` and says whether the X-Ray SDK was loaded. */
function xraySdkLoaded(env: Record<string, string>): boolean {
  const script =
    "import { createRequire } from 'node:module';" +
    "await import('./functions/webhooks/handler.ts');" +
    'const cache = Object.keys(createRequire(import.meta.url).cache);' +
    "process.stdout.write(JSON.stringify(cache.some((f) => f.includes('/aws-xray-sdk-core/'))));";
  const { AWS_EXECUTION_ENV: _execution, POWERTOOLS_TRACE_ENABLED: _enabled, ...rest } = process.env;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: process.cwd(),
    encoding: 'utf8',
    env: { ...rest, TABLE_NAME: 'tracing-off', AWS_REGION: 'eu-west-1', LOG_LEVEL: 'warn', ...env },
  });
  return JSON.parse(out) as boolean;
}

describe('webhooks: the X-Ray SDK only where it traces', () => {
  it('is not loaded by the signer outside Lambda, and is in a Lambda environment', () => {
    expect(xraySdkLoaded({})).toBe(false);
    expect(xraySdkLoaded({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x' })).toBe(true);
    expect(xraySdkLoaded({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x', POWERTOOLS_TRACE_ENABLED: 'false' })).toBe(
      false,
    );
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
