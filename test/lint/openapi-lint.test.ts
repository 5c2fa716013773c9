import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { OPENAPI_FILE } from '#bin/openapi.ts';

const run = promisify(execFile);

/**
 * The committed document (test/unit/openapi-document.test.ts proves it current) passes Redocly's
 * recommended rules. A lint gate, not a unit test: it runs the CLI, which costs seconds.
 */
describe('the OpenAPI document, linted', () => {
  it('passes @redocly/cli lint with the recommended rules (redocly.yaml)', async () => {
    const { stdout, stderr } = await run('npx', ['redocly', 'lint', OPENAPI_FILE, '--format', 'json'], {
      maxBuffer: 10 * 1024 * 1024,
    }).catch((err) => err);
    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number } };
    expect(report.totals, stderr).toEqual(expect.objectContaining({ errors: 0, warnings: 0 }));
  }, 60_000);
});
