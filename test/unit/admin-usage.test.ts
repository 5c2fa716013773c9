import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DEFAULT_EVENTS } from '#domain/webhook/event-subscription.ts';
import { EVENT_TYPES } from '#domain/event/event.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

/** `npm run admin -- --help` is where an admin learns what `--events` takes: no store is involved. */
describe('admin CLI --help', () => {
  it('names every event type --events accepts, and the default', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'bin/admin.ts', '--help'], {
      cwd: root,
      // Starting tsx on a loaded machine takes seconds.
      timeout: 120_000,
    });
    const line = stdout.split('\n').find((l) => l.trim().startsWith('events:'));
    expect(line).toBeDefined();
    for (const type of EVENT_TYPES) expect(line).toContain(type);
    expect(line).toContain(`default: ${DEFAULT_EVENTS.join(', ')}`);
  });
});
