import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { db } from '#db/core/client.ts';
import { adminCommand, createKey, createStore } from '#fixtures/api.ts';
import { grantInProcess, requestInProcess } from '#fixtures/oauth-grant.ts';
import { handler as admin } from '#functions/admin/handler.ts';

/**
 * What the store admin sees when a command is refused for something they can get wrong (a store
 * or key that is not there, an id taken, an OAuth grant rotated, an approval code no request has,
 * a request decided already, abilities wider than asked): the admin Lambda's answer, which the CLI
 * prints as one error line with a non-zero exit (bin/admin-run.ts) and the console shows
 * (bin/console). Each refusal's code, message and field, exactly, and that it changed nothing.
 */

/** The admin Lambda's answer to a command that must be refused: its error, as the CLI and console get it. */
async function refusal(command: string, args: Record<string, unknown>) {
  const out = await admin({ command, args });
  expect(out, `${command} ${JSON.stringify(args)}`).toMatchObject({ ok: false });
  return out.ok ? undefined : out.error;
}

/**
 * Runs `step` right before this worker's next DynamoDB UpdateItem is sent (the admin Lambda runs
 * in-process here): another admin's command made certain to land between a command's read and
 * its write. `step`'s own calls pass through.
 */
function beforeNextUpdate(step: () => Promise<unknown>): () => void {
  const name = `before-next-update-${randomUUID()}`;
  let fired = false;
  db().middlewareStack.add(
    (next, context) => async (args) => {
      if (!fired && context.commandName === 'UpdateItemCommand') {
        fired = true;
        await step();
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  return () => db().middlewareStack.remove(name);
}

/** A key id no key has: ids are drawn from one sequence, far below this. */
const NO_KEY = 2 ** 31 - 1;

/** An SQS destination whose arguments are all valid: what is refused is the key. */
const DESTINATION = {
  sqs_queue_url: 'https://sqs.eu-west-1.amazonaws.com/123456789012/store-events.fifo',
  role_arn: 'arn:aws:iam::123456789012:role/store-events-crm',
};

describe('admin refusals: stores and keys', () => {
  it('refuses a store id that is taken, keeping the store as it was', async () => {
    const id = await createStore('SEK');
    expect(await refusal('stores create', { id, name: 'Again', currency: 'EUR' })).toEqual({
      code: 'conflict',
      message: `store "${id}" already exists`,
      field: 'id',
    });
    const { data } = await adminCommand<{ data: { id: string; currency_code: string }[] }>('stores list');
    expect(data.find((s) => s.id === id)).toMatchObject({ currency_code: 'SEK' });
  });

  it('refuses a store that does not exist, naming the store argument, and makes no key', async () => {
    const store = `no-store-${randomUUID().slice(0, 8)}`;
    const missing = { code: 'not_found', message: `store "${store}" does not exist`, field: 'store' };
    expect(await refusal('keys create', { store, name: 'CRM', abilities: 'catalog:read' })).toEqual(missing);
    expect(await refusal('keys list', { store })).toEqual(missing);
    expect(await refusal('products reindex-names', { store })).toEqual(missing);
    expect(await refusal('webhooks events', { store })).toEqual(missing);
  });

  it('refuses a key that does not exist, naming the id argument, command by command', async () => {
    const commands: [string, Record<string, unknown>][] = [
      ['keys revoke', {}],
      ['keys rotate', {}],
      ['keys set-webhook', { url: '' }],
      ['keys set-mcp', { mcp: 'read-only' }],
      ['keys set-budget', { writes_per_hour: '10' }],
      ['keys set-destination', DESTINATION],
      ['keys external-id', {}],
      ['keys rotate-webhook-secret', {}],
      ['keys requests', {}],
      ['webhooks deliveries', {}],
      ['webhooks ping', {}],
      ['webhooks redeliver', { event: 'evt_0123abcd' }],
    ];
    for (const [command, args] of commands)
      expect(await refusal(command, { id: NO_KEY, ...args })).toEqual({
        code: 'not_found',
        message: `key ${NO_KEY} does not exist`,
        field: 'id',
      });
  });

  it('refuses rotating an OAuth grant (its tokens expire; a rotated one would not), and its tokens keep working', async () => {
    const store = await createStore();
    const grant = await grantInProcess(store);
    expect(await refusal('keys rotate', { id: grant.keyId })).toEqual({
      code: 'invalid_transition',
      message: `key ${grant.keyId} is an OAuth grant; revoke it instead`,
      field: 'id',
    });
    const { data } = await adminCommand<{ data: { id: number; status: string }[] }>('keys list', { store });
    expect(data.find((k) => k.id === grant.keyId)).toMatchObject({ status: 'active' });
  });

  it('refuses a webhook secret rotation that another rotation overtook, keeping the secret of the one that won', async () => {
    const store = await createStore();
    const key = await createKey(store, ['orders:read'], { webhook_url: 'https://crm.example.com/hooks' });
    let winner: { webhook_secret?: string } = {};
    const remove = beforeNextUpdate(async () => {
      winner = await adminCommand('keys rotate-webhook-secret', { id: key.id });
    });
    try {
      expect(await refusal('keys rotate-webhook-secret', { id: key.id })).toEqual({
        code: 'conflict',
        message: `the webhook secret of key ${key.id} was rotated concurrently; run the command again`,
        field: 'id',
      });
    } finally {
      remove();
    }
    expect(winner.webhook_secret).toMatch(/^whsec_/);
  });

  it('refuses changing a revoked key, with the same answer from every change', async () => {
    const store = await createStore();
    const key = await createKey(store, ['catalog:read']);
    await adminCommand('keys revoke', { id: key.id });
    for (const [command, args] of [
      ['keys set-mcp', { mcp: 'read-only' }],
      ['keys set-budget', { status_changes_per_hour: '3' }],
      ['keys set-webhook', { exclude_own: 'true' }],
      ['keys set-destination', DESTINATION],
      ['webhooks ping', {}],
    ] as const)
      expect(await refusal(command, { id: key.id, ...args })).toEqual({
        code: 'invalid_transition',
        message: `key ${key.id} is revoked`,
        field: 'id',
      });
  });
});

describe('admin refusals: OAuth decisions', () => {
  it('refuses an approval code no request has, to show, approve or deny it', async () => {
    const missing = {
      code: 'not_found',
      message: 'no authorization request has the approval code WXYZ-WXYZ',
      field: 'code',
    };
    expect(await refusal('oauth show', { code: 'WXYZ-WXYZ' })).toEqual(missing);
    expect(await refusal('oauth approve', { code: 'WXYZ-WXYZ', store: 'any-store' })).toEqual(missing);
    expect(await refusal('oauth deny', { code: 'WXYZ-WXYZ' })).toEqual(missing);
  });

  it('refuses abilities wider than asked, and none at all, deciding nothing', async () => {
    const store = await createStore();
    const { started } = await requestInProcess(Date.now(), 'catalog:read orders:read');
    const code = started.request.approval_code;
    expect(await refusal('oauth approve', { code, store, abilities: 'catalog:read,catalog:write' })).toEqual({
      code: 'validation_failed',
      message: 'the client did not ask for catalog:write (it asked for catalog:read, orders:read)',
      field: 'abilities',
    });
    expect(await refusal('oauth approve', { code, store, abilities: ',' })).toEqual({
      code: 'validation_failed',
      message: 'at least one ability is required',
      field: 'abilities',
    });
    expect(await adminCommand('oauth show', { code })).toMatchObject({ status: 'pending' });
  });

  it('refuses a store that does not exist, naming the store argument, deciding nothing', async () => {
    const { started } = await requestInProcess();
    const code = started.request.approval_code;
    const store = `no-store-${randomUUID().slice(0, 8)}`;
    expect(await refusal('oauth approve', { code, store })).toEqual({
      code: 'not_found',
      message: `store "${store}" does not exist`,
      field: 'store',
    });
    expect(await adminCommand('oauth show', { code })).toMatchObject({ status: 'pending' });
  });

  it('refuses an approval that a denial overtook between its read and its write, leaving it denied', async () => {
    const store = await createStore();
    const code = (await requestInProcess()).started.request.approval_code;
    const remove = beforeNextUpdate(() => adminCommand('oauth deny', { code }));
    try {
      expect(await refusal('oauth approve', { code, store })).toEqual({
        code: 'invalid_transition',
        message: `the request ${code} was decided meanwhile`,
        field: 'code',
      });
    } finally {
      remove();
    }
    expect(await adminCommand('oauth show', { code })).toMatchObject({ status: 'denied' });
  });

  it('refuses deciding a request twice, saying what it was decided', async () => {
    const store = await createStore();
    const approved = (await requestInProcess()).started.request.approval_code;
    await adminCommand('oauth approve', { code: approved, store });
    const denied = (await requestInProcess()).started.request.approval_code;
    await adminCommand('oauth deny', { code: denied });
    for (const [code, status] of [
      [approved, 'approved'],
      [denied, 'denied'],
    ] as const) {
      const again = { code: 'invalid_transition', message: `the request ${code} is ${status}`, field: 'code' };
      expect(await refusal('oauth approve', { code, store })).toEqual(again);
      expect(await refusal('oauth deny', { code })).toEqual(again);
    }
  });
});

describe('admin refusals: arguments a command cannot take', () => {
  it('refuses each argument it cannot read, naming it, before anything is looked up', async () => {
    const store = `no-store-${randomUUID().slice(0, 8)}`;
    const create = { store, name: 'CRM', abilities: 'catalog:read' };
    const TYPES =
      'known types: order.created, order.paid, order.status_changed, product.created, product.updated, product.stock_changed, category.upserted, tag.upserted, page.published, page.unpublished';
    const UNKNOWN_ABILITY =
      'unknown abilities: orders:delete (known: catalog:read, catalog:write, orders:read, orders:write-status, content:read, content:write)';
    const role = 'arn:aws:iam::123456789012:role/store-events-crm';
    const cases: [string, Record<string, unknown>, string, string][] = [
      [
        'keys create',
        { ...create, events: 'bogus' },
        `bogus is no event type (a field name follows a type and a colon: product.updated:price); ${TYPES}`,
        'events',
      ],
      ['keys create', { ...create, abilities: 'catalog:read,orders:delete' }, UNKNOWN_ABILITY, 'abilities'],
      ['keys create', { ...create, abilities: ',' }, 'abilities: name at least one ability', 'abilities'],
      ['keys create', { ...create, webhook_url: 'not a url' }, 'webhook_url is not a valid URL', 'webhook_url'],
      ['keys set-webhook', { id: NO_KEY }, "give --url ('' removes it), --events and/or --exclude-own", 'url'],
      ['keys set-webhook', { id: NO_KEY, events: 'order.bogus' }, `order.bogus is no event type; ${TYPES}`, 'events'],
      [
        'keys set-budget',
        { id: NO_KEY },
        'give --writes-per-hour and/or --status-changes-per-hour (a number or none)',
        'writes_per_hour',
      ],
      [
        'keys set-destination',
        { id: NO_KEY, role_arn: role },
        'give either --sqs-queue-url URL or --eventbridge-bus-arn ARN',
        'sqs_queue_url',
      ],
      [
        'keys set-destination',
        { id: NO_KEY, sqs_queue_url: 'https://x', role_arn: 'arn:nope' },
        'role_arn must be a role ARN whose name starts with store-events-, like arn:aws:iam::123456789012:role/store-events-crm (docs/destinations.md)',
        'role_arn',
      ],
      [
        'keys set-destination',
        { id: NO_KEY, sqs_queue_url: 'https://x', role_arn: role },
        'sqs_queue_url must be a queue URL like https://sqs.eu-west-1.amazonaws.com/123456789012/store-events.fifo',
        'sqs_queue_url',
      ],
      [
        'keys set-destination',
        { id: NO_KEY, eventbridge_bus_arn: 'arn:nope', role_arn: role },
        'eventbridge_bus_arn must be a bus ARN like arn:aws:events:eu-west-1:123456789012:event-bus/store-events',
        'eventbridge_bus_arn',
      ],
      ['webhooks redeliver', { id: NO_KEY }, 'give either --event EVENT_ID or --since TIME', 'event'],
      [
        'webhooks redeliver',
        { id: NO_KEY, event: 'evt_0123abcd', state: 'failed' },
        '--state goes with --since only',
        'state',
      ],
      ['oauth approve', { code: 'WXYZ-WXYZ', store, abilities: 'orders:delete' }, UNKNOWN_ABILITY, 'abilities'],
    ];
    const answers = [];
    for (const [command, args] of cases) answers.push([command, await refusal(command, args)]);
    expect(answers).toEqual(
      cases.map(([command, , message, field]) => [command, { code: 'validation_failed', message, field }]),
    );
  });

  it('refuses pinging a key with nowhere to send to, or a revoked one', async () => {
    const store = await createStore();
    const key = await createKey(store, ['orders:read']);
    expect(await refusal('webhooks ping', { id: key.id })).toEqual({
      code: 'validation_failed',
      message: `key ${key.id} has no webhook URL or destination (set one with keys set-webhook or keys set-destination)`,
      field: 'id',
    });
    await adminCommand('keys revoke', { id: key.id });
    expect(await refusal('webhooks ping', { id: key.id })).toEqual({
      code: 'invalid_transition',
      message: `key ${key.id} is revoked`,
      field: 'id',
    });
  });
});
