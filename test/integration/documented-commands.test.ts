import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '#bin/admin-run.ts';
import { documentedCommands, kindOf, ROOT, type DocCommand } from '#fixtures/doc-commands.ts';
import { freePort } from '#fixtures/free-port.ts';
import { orderFile } from '#fixtures/orders.ts';
import { STREAM_WAIT_MS } from '#fixtures/stream-wait.ts';

const run = promisify(execFile);

/**
 * Issue 44: the commands README.md and docs/ tell a user to run, run as written, in the order
 * written: `npm start` (on free ports and a fresh data directory, set as the README's variables
 * table says), then every `npm run admin -- ...` and every `curl` against it, with only what must
 * change substituted: the address (`127.0.0.1:3000` → the port `npm start` was given), the key
 * (`sia_...` → the demo key `npm start` printed), a key id, event id or store a previous command
 * printed, and the file an example names. Each must exit 0; each curl must be answered 2xx.
 *
 * `npm start`, every curl and the first admin command of each document run through bash exactly as
 * a user would paste them, so npm's wrapper and the repository's .npmrc are proven once per
 * document. The document's other admin commands have bash split their words as it would, and
 * then run through the CLI's own runner (bin/admin-run.ts) in this process: npm, tsx and the SDK
 * started for each (seconds idle, far more on a loaded machine) made this file the suite's slowest.
 *
 * A text written more than once (in a block and again in a sentence) runs once, where it is first
 * written; a command that only repeats one run here with other values is SAME_AS in
 * test/fixtures/doc-commands.ts. The `cdk` commands are test/infra/documented-deploy.test.ts; the
 * commands no test runs, and why, are NOT_RUN in test/fixtures/doc-commands.ts.
 *
 * A stack of its own (not the run's shared one): the examples assume what `npm start` makes, the
 * seeded demo store, its key as id 1 and the example store `acme`.
 */
const commands = documentedCommands()
  .filter((c) => ['start', 'admin', 'curl', 'assignment'].includes(kindOf(c.text)!))
  // A text written twice (an example repeated in a sentence) runs once, where it is first written.
  .filter((c, i, all) => all.findIndex((d) => d.text === c.text) === i);

/**
 * A user's shell: none of the npm_config_* of the test's own npm (npm must read the repository's
 * .npmrc), nor what test/fixtures/env.ts set to point this worker at the run's shared stack.
 */
const WORKER_ONLY = [
  'DYNAMODB_ENDPOINT',
  'TABLE_NAME',
  'WEBHOOK_SECRET_KEY_FILE',
  'REQUEST_LOG_FILE',
  'ALLOW_PRIVATE_WEBHOOKS',
  'LOG_LEVEL',
  'WEBHOOK_RETRY_SCHEDULE',
];
const shellEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([name]) => !name.toLowerCase().startsWith('npm_config_') && !WORKER_ONLY.includes(name),
  ),
);

describe('the documented commands, run as written', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'doc-commands-'));
  /** The variables a user sets for `npm start` and keeps for `npm run admin` (README, "Run it"). */
  let stackEnv: Record<string, string>;
  let stack: ChildProcess | undefined;
  let port = 0;
  let key = '';
  const shellVars: Record<string, string> = {};
  /** What earlier commands printed, for the placeholders of later ones. */
  const seen = { keyId: undefined as number | undefined, keyIds: [] as number[], store: 'acme' };

  beforeAll(async () => {
    port = await freePort();
    stackEnv = {
      PORT: String(port),
      DYNAMODB_PORT: String(await freePort()),
      DATA_DIR: path.join(dir, 'data'),
    };
    // The admin commands run in this process use the stack's store as a user's shell would name it.
    // This worker uses no other store, so nothing here has read the variables before.
    for (const name of WORKER_ONLY) delete process.env[name];
    Object.assign(process.env, stackEnv);
    writeFileSync(path.join(dir, 'order.json'), JSON.stringify(orderFile({ reference: 'ORD-1' })));
    // curl prints each answer's status last, without a change to the command as written.
    writeFileSync(path.join(dir, '.curlrc'), 'write-out = "\\nHTTP_STATUS %{http_code}\\n"\n');
  });

  afterAll(async () => {
    if (stack?.pid) {
      const gone = new Promise((resolve) => stack!.once('exit', resolve));
      process.kill(-stack.pid, 'SIGINT'); // Ctrl-C, as the README stops it
      await gone;
      while (spawnSync('pgrep', ['-g', String(stack.pid)]).status === 0) await new Promise((r) => setTimeout(r, 100));
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds npm start, admin CLI and curl examples to run', () => {
    expect(commands.filter((c) => kindOf(c.text) === 'start').length).toBeGreaterThan(0);
    expect(commands.filter((c) => kindOf(c.text) === 'admin').length).toBeGreaterThan(10);
    expect(commands.filter((c) => kindOf(c.text) === 'curl').length).toBeGreaterThan(10);
    expect(commands[0]?.text, 'npm start comes before the commands that need it').toBe('npm start');
  });

  /** The address and key of the local stack this test started, where the docs show the defaults. */
  const localize = (text: string) => text.replaceAll('127.0.0.1:3000', `127.0.0.1:${port}`).replaceAll('sia_...', key);

  /**
   * Placeholders filled in from what earlier commands printed (the key `keys create` made, the store
   * `stores create` made), optional flags taken, and the file an example names. An event id is read
   * with the documented command that lists it: the key's delivery log (`webhooks deliveries`, waiting
   * for the fan-out to record the delivery) or, for a store, its event log (`webhooks events`).
   */
  async function fillIn(text: string): Promise<string> {
    const filled = localize(text)
      .replace(/\[([^\]]+)\]/g, '$1')
      .replace(/--id (?:\d+|KEY_ID)(?=\s|$)/g, () => `--id ${seen.keyId}`)
      .replace(/\bSTORE_ID\b/g, seen.store)
      .replace(/--limit N\b/g, '--limit 10')
      .replace(/--store <id>(?=\s|$)/g, `--store ${seen.store}`)
      .replace(/--file order\.json(?=\s|$)/g, `--file ${path.join(dir, 'order.json')}`);
    const placeholder = /--event (?:evt_\.\.\.|EVENT_ID)(?=\s|$)/g;
    if (!placeholder.test(filled)) return filled;
    if (!/--id \d+/.test(filled)) return filled.replace(placeholder, `--event ${await storeEvent()}`);
    const { keyId, eventId } = await deliveredEvent();
    return filled.replace(/--id \d+/, `--id ${keyId}`).replace(placeholder, `--event ${eventId}`);
  }

  async function adminJson(args: string): Promise<any> {
    const result = await inProcess(`npm run admin -- ${args} --json`);
    expect(result.code, `${args}\n${result.stderr}`).toBe(0);
    return JSON.parse(result.stdout);
  }

  /**
   * A delivery to redeliver: the newest in the log of the newest key the docs made that has one
   * (a key made after the example's orders has none), once the fan-out has recorded it.
   */
  async function deliveredEvent(): Promise<{ keyId: number; eventId: string }> {
    const deadline = Date.now() + STREAM_WAIT_MS;
    for (;;) {
      for (const keyId of [...seen.keyIds].reverse()) {
        const log = await adminJson(`webhooks deliveries --id ${keyId}`);
        if (log.data.length > 0) return { keyId, eventId: log.data[0].event_id };
      }
      if (Date.now() > deadline) throw new Error(`no key has a delivery after ${STREAM_WAIT_MS} ms`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  const storeEvent = async (): Promise<string> =>
    (await adminJson(`webhooks events --store ${seen.store} --after 0`)).data.at(-1).id;

  async function shell(text: string, env: Record<string, string>) {
    try {
      const { stdout, stderr } = await run('bash', ['-c', text], {
        cwd: ROOT,
        env: { ...shellEnv, ...stackEnv, ...shellVars, ...env },
        // npm, tsx and the SDK start for each admin command: seconds idle, far more on a loaded machine.
        timeout: 120_000,
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }

  /** An admin command as bash would pass its words to the CLI, run by the CLI's runner in this process. */
  async function inProcess(text: string) {
    const rest = /^npm run admin -- (.*)$/s.exec(text)?.[1];
    if (rest === undefined) throw new Error(`not an admin command: ${text}`);
    const split = await shell(`printf '%s\\0' ${rest}`, {});
    expect(split.code, `${text}\n${split.stderr}`).toBe(0);
    const { code, text: printed } = await runAdmin(split.stdout.split('\0').slice(0, -1));
    return code === 0 ? { code, stdout: printed, stderr: '' } : { code, stdout: '', stderr: printed };
  }
  /** The documents whose first admin command ran through the real `npm run admin`. */
  const npmRunIn = new Set<string>();

  const start = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const child = spawn('bash', ['-c', 'npm start'], {
        cwd: ROOT,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...shellEnv, ...stackEnv },
      });
      stack = child;
      let out = '';
      child.stdout!.on('data', (d) => {
        out += d;
        const demo = /demo key:\s+(sia_\S+)/.exec(out);
        if (demo) {
          key = demo[1]!;
          resolve();
        }
      });
      child.stderr!.on('data', (d) => (out = (out + d).slice(-8000)));
      child.once('exit', (code) => reject(new Error(`npm start exited (${code}): ${out}`)));
    });

  async function runCommand(command: DocCommand): Promise<void> {
    const kind = kindOf(command.text);
    const at = `${command.where}: ${command.text}`;
    if (kind === 'start') return start();
    if (kind === 'assignment') {
      const [name, value] = localize(command.text).split(/=(.*)/s) as [string, string];
      shellVars[name] = value;
      return;
    }
    if (kind === 'curl') {
      const result = await shell(localize(command.text), { CURL_HOME: dir });
      expect(result.code, `${at}\n${result.stderr}`).toBe(0);
      const status = /HTTP_STATUS (\d+)\s*$/.exec(result.stdout)?.[1];
      expect(status, `${at}\n${result.stdout}`).toMatch(/^2\d\d$/);
      return;
    }
    const text = await fillIn(command.text);
    const document = command.where.replace(/:\d+$/, '');
    const viaNpm = !npmRunIn.has(document);
    npmRunIn.add(document);
    const result = viaNpm ? await shell(text, {}) : await inProcess(text);
    expect(result.code, `${at}\n(ran${viaNpm ? '' : ' in process'}: ${text})\n${result.stderr}`).toBe(0);
    if (/^npm run admin -- keys create\b/.test(text)) {
      seen.keyId = JSON.parse(result.stdout).id as number;
      seen.keyIds.push(seen.keyId);
    }
    if (/^npm run admin -- stores create\b/.test(text)) seen.store = JSON.parse(result.stdout).id;
  }

  // One test: each command depends on what the ones before it made (the store, the key, the order).
  it('runs every one in order; each exits 0 and every curl is answered 2xx', async () => {
    for (const command of commands) await runCommand(command);
  });
});
