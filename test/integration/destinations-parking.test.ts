import { afterAll, describe, expect, it } from 'vitest';
import { handler as fanOut } from '#functions/events/handler.ts';
import { resetConfig } from '#shared/config.ts';
import { useOwnPipeline } from '#fixtures/own-pipeline.ts';
import { adminCommand, createKey, createStore } from '#fixtures/api.ts';
import { waitFor } from '#fixtures/webhooks.ts';
import { storedOutboxItem, streamRecord } from '#fixtures/stream-records.ts';
import { integratorSide } from '#fixtures/destinations.ts';

/**
 * A destination whose role refuses the key's external id fails like a webhook receiver that keeps
 * answering 5xx: each attempt is a failure with its reason in the delivery log, the endpoint is
 * parked once the failures are sustained (here 3 over 2 s, a probe every second: the production
 * figures are 10 over 15 min and 5 min), nothing is attempted but the probe, and once the trust is
 * fixed the probe delivers the backlog. On a pipeline of this file's own, so the shared stack keeps
 * its timing; the events are driven through the fan-out Lambda as the stream would.
 */
describe('an SQS destination whose role refuses the external id', () => {
  const { destinations } = useOwnPipeline({
    before: () => {
      process.env.WEBHOOK_RETRY_SCHEDULE = '1,1,2';
      process.env.WEBHOOK_PARK_AFTER_FAILURES = '3';
      process.env.WEBHOOK_PARK_AFTER_SECONDS = '2';
      process.env.WEBHOOK_PROBE_INTERVAL_SECONDS = '1';
      resetConfig();
    },
  });
  let side: ReturnType<typeof integratorSide> | undefined;
  afterAll(() => side?.close());

  it('is parked like a failing webhook, says why in the delivery log, and drains once the role trusts it', async () => {
    side = integratorSide(destinations());
    const store = await createStore();
    const key = (await createKey(store, ['orders:read'])) as Awaited<ReturnType<typeof createKey>> & {
      aws_external_id: string;
    };
    const queueUrl = await side.queue(false);
    const role = await side.role('sie_ffffffffffffffffffffffffffffffff');
    await adminCommand('keys set-destination', { id: key.id, sqs_queue_url: queueUrl, role_arn: role });

    const items = await Promise.all([1, 2, 3].map(() => storedOutboxItem(store)));
    await fanOut({ Records: items.map((item) => streamRecord(item)) });

    type Log = { endpoint: { state: string; reason: string | null; last_error: string | null }; data: any[] };
    const log = () => adminCommand<Log>('webhooks deliveries', { id: key.id });
    await waitFor('the endpoint parked', async () => (await log()).endpoint.state === 'parked', 60_000, 200);
    const parked = await log();
    expect(parked.endpoint.reason).toMatch(
      /^\d+ failed attempts in a row over .*; last: assume role .*: AccessDenied: /,
    );
    expect(parked.endpoint.last_error).toContain(`assume role ${role}: AccessDenied`);
    for (const d of parked.data) {
      expect(d.state).toBe('pending');
      if (d.attempts > 0) {
        expect(d.last_status_code).toBe(403);
        expect(d.last_error).toMatch(
          /^assume role arn:aws:iam::111122223333:role\/store-events-.*: AccessDenied: .*not authorized to perform: sts:AssumeRole/,
        );
      }
    }
    await waitFor(
      'every delivery waiting for the probe',
      async () => (await log()).data.every((d) => d.parked_at),
      60_000,
      200,
    );
    expect(await side.drain(queueUrl)).toEqual([]);
    const endpoints = await adminCommand<{ data: Record<string, any>[] }>('webhooks endpoints', { store });
    expect(endpoints.data).toEqual([
      expect.objectContaining({
        key_id: key.id,
        webhook_url: null,
        destination: { kind: 'sqs', target: `sqs:${queueUrl.split('/').pop()}` },
        endpoint: expect.objectContaining({ state: 'parked' }),
      }),
    ]);

    // The integrator fixes the trust: the next probe delivers, and the backlog follows. The probe
    // resumes the endpoint after it has recorded the last delivery (shared/app/webhook-probe.ts), so
    // the test waits for both.
    await side.trust(role, key.aws_external_id);
    await waitFor(
      'all three delivered and the endpoint resumed',
      async () => {
        const now = await log();
        return (
          now.endpoint.state === 'active' && now.data.length === 3 && now.data.every((d) => d.state === 'delivered')
        );
      },
      60_000,
      200,
    );
    expect((await log()).endpoint).toMatchObject({
      state: 'active',
      last_error: expect.stringContaining('AccessDenied'),
    });
    const onQueue = (await side.drain(queueUrl)).map((m) => m.MessageAttributes?.event_id?.StringValue);
    expect(new Set(onQueue)).toEqual(new Set(items.map((i) => i.event_id)));
  }, 180_000);
});
