import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, inject, describe, expect, it } from 'vitest';
import { adminCommand, client, createKey, createStore } from '#fixtures/api.ts';
import { handler as admin } from '#functions/admin/handler.ts';
import { closedPort } from '#fixtures/webhooks.ts';

const run = promisify(execFile);

/**
 * A shell's environment: without the npm_config_* variables that `npm test` / `npx` pass down
 * (npm_config_loglevel among them), so that npm reads its settings from the repository's .npmrc
 * as it does for someone typing the command.
 */
const shellEnv = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_config_')),
);

/** The real CLI exactly as documented (`npm run admin -- ...`), in its own process, against the test store. */
async function cli(
  args: string[],
  env: Record<string, string> = {},
  [file, ...before]: [string, ...string[]] = ['npm', 'run', 'admin', '--'],
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(file, [...before, ...args], {
      env: {
        ...shellEnv,
        DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
        TABLE_NAME: inject('tableName'),
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        ...env,
      },
      // Each call starts npm, tsx and the SDK: seconds on an idle machine, far more on a loaded one.
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/**
 * `npm run admin -- ...` with stdout and stderr each a real pipe (as in `... --json | jq`; a child
 * process's own stdio here would be a socket pair, which holds several times more) to a reader that
 * takes one byte, then nothing more until the CLI has exited or 5 s have passed: a pipe holds
 * 64 KiB, so the rest of a longer answer is still in the CLI's process while it waits. $1 is a
 * marker file, made once the CLI has exited; bash's exit code is the CLI's.
 */
const THROUGH_SLOW_PIPES: [string, ...string[]] = [
  'bash',
  '-c',
  `ended="$1"; shift
  slow() { dd bs=1 count=1 2>/dev/null; for _ in $(seq 50); do [ -e "$ended" ] && break; sleep 0.1; done; cat; }
  npm run admin -- "$@" > >(slow) 2> >(slow >&2)
  code=$?; touch "$ended"; exit $code`,
  'bash',
];

describe('admin CLI', () => {
  const store = `cli-${randomUUID().slice(0, 8)}`;

  // Seven CLI processes in a row: on a loaded machine each takes 10 s or more to start.
  it('creates a store and a key, printing exactly one JSON document with --json', async () => {
    const created = await cli([
      'stores',
      'create',
      '--id',
      store,
      '--name',
      'CLI store',
      '--currency',
      'USD',
      '--json',
    ]);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ id: store, name: 'CLI store', currency_code: 'USD' });

    const key = await cli([
      'keys',
      'create',
      '--store',
      store,
      '--name',
      'crm',
      '--abilities',
      'catalog:read,orders:read',
      '--webhook-url',
      'http://127.0.0.1:9/hook',
      '--json',
    ]);
    expect(key.code).toBe(0);
    expect(key.stdout.trim().split('\n')).toHaveLength(1);
    const k = JSON.parse(key.stdout);
    expect(Object.keys(k).sort()).toEqual(
      [
        'abilities',
        'aws_external_id',
        'created_at',
        'destination',
        'events',
        'exclude_own',
        'id',
        'mcp',
        'name',
        'status_changes_per_hour',
        'store_id',
        'token',
        'webhook_secret',
        'webhook_url',
        'writes_per_hour',
      ].sort(),
    );
    expect(k).toMatchObject({
      store_id: store,
      name: 'crm',
      abilities: ['catalog:read', 'orders:read'],
      webhook_url: 'http://127.0.0.1:9/hook',
      destination: { kind: 'webhook', url: 'http://127.0.0.1:9/hook' },
      aws_external_id: expect.stringMatching(/^sie_[0-9a-f]{32}$/),
      exclude_own: false,
    });
    expect(k.events).toEqual(['order.created', 'order.paid', 'order.status_changed']);
    expect(k.webhook_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const res = await client(k.token).get('/products');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);

    const list = await cli(['keys', 'list', '--store', store, '--json']);
    const listed = JSON.parse(list.stdout).data;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      id: k.id,
      status: 'active',
      events: ['order.created', 'order.paid', 'order.status_changed'],
    });
    expect(listed[0].last_used_at).toMatch(/Z$/);
    expect(listed[0]).not.toHaveProperty('token');
    expect(listed[0]).not.toHaveProperty('webhook_secret');

    const webhook = await cli([
      'keys',
      'set-webhook',
      '--id',
      String(k.id),
      '--url',
      '',
      '--events',
      'order.paid,order.created',
      '--json',
    ]);
    expect(JSON.parse(webhook.stdout)).toMatchObject({ webhook_url: null, events: ['order.created', 'order.paid'] });

    const rotated = JSON.parse((await cli(['keys', 'rotate', '--id', String(k.id), '--json'])).stdout);
    expect(rotated.id).toBe(k.id);
    expect((await client(k.token).get('/products')).status).toBe(401);
    expect((await client(rotated.token).get('/products')).status).toBe(200);

    const revoked = JSON.parse((await cli(['keys', 'revoke', '--id', String(k.id), '--json'])).stdout);
    expect(revoked.status).toBe('revoked');
    expect((await client(rotated.token).get('/products')).status).toBe(401);
  }, 600_000);

  /**
   * What README.md and docs/contract.md#admin-cli say of a revoked key, command by command (in
   * process: the CLI turns a refusal into one error line and a non-zero exit, pinned below).
   */
  it('after keys revoke: revoking again answers the same key, changes and sends are refused, reads answer', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, ['orders:read'], { webhook_url: 'https://crm.example.com/hooks' });
    const first = await adminCommand<{ status: string; revoked_at: string }>('keys revoke', { id: key.id });
    expect(first.status).toBe('revoked');

    expect(await adminCommand('keys revoke', { id: key.id })).toEqual(first);
    const refused: [string, Record<string, unknown>][] = [
      ['keys rotate', {}],
      ['keys rotate-webhook-secret', {}],
      ['keys set-webhook', { url: 'https://crm.example.com/v2' }],
      ['keys set-webhook', { url: '' }],
      ['keys set-webhook', { events: 'order.paid' }],
      ['keys set-budget', { writes_per_hour: '10' }],
      ['keys set-mcp', { mcp: 'read-only' }],
      ['webhooks ping', {}],
      ['webhooks redeliver', { event: 'evt_0123abcd' }],
      ['webhooks redeliver', { since: '2020-01-01T00:00:00Z' }],
    ];
    for (const [command, args] of refused) {
      const out = await admin({ command, args: { id: key.id, ...args } });
      expect(out.ok ? out.data : out.error, `${command} ${JSON.stringify(args)}`).toEqual({
        code: 'invalid_transition',
        message: `key ${key.id} is revoked`,
        field: 'id',
      });
    }
    const listed = await adminCommand<{ data: { id: number; status: string; webhook_url: string }[] }>('keys list', {
      store: storeId,
    });
    expect(listed.data.find((k) => k.id === key.id)).toMatchObject({
      status: 'revoked',
      webhook_url: 'https://crm.example.com/hooks',
    });
    expect(await adminCommand('webhooks deliveries', { id: key.id })).toMatchObject({ data: [] });
    expect(await adminCommand('keys requests', { id: key.id })).toMatchObject({ data: [] });
  });

  it('keys list shows the MCP mode, budgets and exclude-own that were set, with and without --json', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, ['orders:read']);
    const untouched = await createKey(storeId, ['orders:read']);
    await adminCommand('keys set-mcp', { id: key.id, mcp: 'read-only' });
    await adminCommand('keys set-budget', { id: key.id, writes_per_hour: '120', status_changes_per_hour: '7' });
    await adminCommand('keys set-webhook', { id: key.id, exclude_own: 'true' });
    const set = { mcp: 'read-only', writes_per_hour: 120, status_changes_per_hour: 7, exclude_own: true, kind: 'key' };
    const unset = {
      mcp: 'full',
      writes_per_hour: null,
      status_changes_per_hour: null,
      exclude_own: false,
      kind: 'key',
    };
    for (const json of [['--json'], []]) {
      const out = await cli(['keys', 'list', '--store', storeId, ...json]);
      expect(out.code).toBe(0);
      const listed: { id: number }[] = JSON.parse(out.stdout).data;
      expect(listed.find((k) => k.id === key.id)).toMatchObject(set);
      expect(listed.find((k) => k.id === untouched.id)).toMatchObject(unset);
    }
  }, 600_000);

  it.each([[['stores', 'list']], [['console']]])(
    '%j says in one line which endpoint and DATA_DIR it tried when the stack is not running',
    async (args) => {
      const out = await cli(args, {
        DYNAMODB_ENDPOINT: `http://127.0.0.1:${await closedPort()}`,
        DATA_DIR: '/tmp/no-stack-here',
      });
      expect(out.code).toBe(1);
      const lines = out.stderr
        .trim()
        .split('\n')
        .filter((l) => !l.includes('Warning'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /cannot reach DynamoDB at http:\/\/127\.0\.0\.1:\d+ .*DATA_DIR \/tmp\/no-stack-here.*npm start.*DYNAMODB_PORT/,
      );
    },
  );

  it.each([
    [
      ['keys', 'create', '--store', 'nope-store', '--name', 'x', '--abilities', 'catalog:read'],
      /store "nope-store" does not exist/,
    ],
    [
      ['keys', 'create', '--store', 'demo', '--name', 'x', '--abilities', 'catalog:read,orders:delete'],
      /unknown abilities: orders:delete/,
    ],
    [['keys', 'revoke', '--id', '99999999'], /does not exist/],
    [['keys', 'revoke', '--id', 'abc'], /id/],
    [['stores', 'create', '--id', 'x', '--name', 'y', '--currency', 'euro'], /currency/],
    [['keys', 'explode'], /unknown command/],
    [['keys'], /expected a command/],
    [
      [
        'keys',
        'create',
        '--store',
        'demo',
        '--name',
        'x',
        '--abilities',
        'orders:read',
        '--webhook-url',
        'https://10.0.0.1/hook',
      ],
      /webhook_url/,
    ],
    [
      [
        'keys',
        'create',
        '--store',
        'demo',
        '--name',
        'x',
        '--abilities',
        'orders:read',
        '--events',
        'order.created,order.refunded',
      ],
      /order.refunded is no event type; known types: order.created/,
    ],
    [
      ['keys', 'create', '--store', 'demo', '--name', 'x', '--abilities', 'orders:read', '--events', ''],
      /name at least one event/,
    ],
    [['keys', 'set-webhook', '--id', '1', '--events', 'webhook.ping'], /webhook.ping is no event type/],
    [['keys', 'set-webhook', '--id', '1'], /--url .* --events/],
  ])('exits non-zero with one error line for %j', async (args, message) => {
    const out = await cli([...args, '--json']);
    expect(out.code).not.toBe(0);
    expect(out.stdout).toBe('');
    const lines = out.stderr
      .trim()
      .split('\n')
      .filter((l) => !l.includes('Warning'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(message);
  });

  describe('behind a slow pipe', () => {
    let storeId: string;
    const marks = mkdtempSync(join(tmpdir(), 'admin-cli-'));
    let runs = 0;
    const slowly = (): [string, ...string[]] => [...THROUGH_SLOW_PIPES, join(marks, `ended-${++runs}`)];
    afterAll(() => rmSync(marks, { recursive: true, force: true }));
    beforeAll(async () => {
      storeId = await createStore();
      // About 500 bytes each in `keys list`: 200 of them answer over 100 KB, past a pipe's 64 KiB.
      for (let batch = 0; batch < 10; batch++)
        await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            createKey(storeId, ['catalog:read'], { name: `key ${batch * 20 + i} ${'n'.repeat(180)}` }),
          ),
        );
    }, 600_000);

    it('prints the whole --json answer and exits 0 when it is longer than the pipe holds', async () => {
      const expected = `${JSON.stringify(await adminCommand('keys list', { store: storeId }))}\n`;
      expect(Buffer.byteLength(expected)).toBeGreaterThan(100_000);
      const out = await cli(['keys', 'list', '--store', storeId, '--json'], {}, slowly());
      expect(Buffer.byteLength(out.stdout)).toBe(Buffer.byteLength(expected));
      expect(JSON.parse(out.stdout).data).toHaveLength(200);
      expect(out.code).toBe(0);
    }, 600_000);

    it('prints the whole error line and exits non-zero when it is longer than the pipe holds', async () => {
      const unknown = Array.from({ length: 10_000 }, (_, i) => `nope:${i}`);
      const out = await cli(
        ['keys', 'create', '--store', storeId, '--name', 'x', '--abilities', unknown.join(','), '--json'],
        {},
        slowly(),
      );
      expect(out.code).toBe(1);
      expect(out.stdout).toBe('');
      const line = out.stderr.split('\n').find((l) => l.startsWith('error: '));
      expect(Buffer.byteLength(line ?? '')).toBeGreaterThan(100_000);
      expect(line).toMatch(/unknown abilities: nope:0, .* nope:9999 \(known: /);
    }, 600_000);
  });
});
