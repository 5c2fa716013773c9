import '#fixtures/lambda-tracing-env.ts';
import { afterAll, describe, expect, it } from 'vitest';
import { handler as fanOut } from '#functions/events/handler.ts';
import { closeDaemon, TRACE_ROOT, xrayDocuments } from '#fixtures/lambda-tracing-env.ts';
import { useOwnPipeline } from '#fixtures/own-pipeline.ts';
import { createKey, createStore } from '#fixtures/api.ts';
import { waitFor } from '#fixtures/webhooks.ts';
import { storedOutboxItem, streamRecord } from '#fixtures/stream-records.ts';

/**
 * The signer traced as it runs in Lambda (functions/webhooks/tracing.ts): this file's own
 * pipeline runs the signer in a Lambda-like environment with X-Ray on, and a UDP socket stands in
 * for the X-Ray daemon. A delivery must leave a `webhook POST` span and a span for each DynamoDB
 * call, all in the invocation's trace, and the receiver must never see our trace id.
 */
describe('webhooks: X-Ray spans of the signer', () => {
  const { receiver } = useOwnPipeline();
  afterAll(closeDaemon);

  it('records a span per webhook POST and per AWS call, and sends the receiver no trace header', async () => {
    const failing = await receiver(() => ({ status: 503 }));
    const healthy = await receiver();
    const store = await createStore();
    await createKey(store, ['orders:read'], { webhook_url: healthy.url });
    await createKey(store, ['orders:read'], { webhook_url: failing.url });
    const item = await storedOutboxItem(store);
    await fanOut({ Records: [streamRecord(item)] });

    const posts = () =>
      xrayDocuments().filter((d) => d.name === 'webhook POST' && d.annotations?.event_type === item.event_type);
    await waitFor('both POSTs traced', () => posts().length >= 2);
    const host = (url: string) => new URL(url).host;
    const ok = posts().find((d) => d.annotations.webhook_host === host(healthy.url))!;
    const refused = posts().find((d) => d.annotations.webhook_host === host(failing.url))!;
    expect(ok).toMatchObject({
      trace_id: TRACE_ROOT,
      namespace: 'remote',
      annotations: { attempt: 1, status: 204 },
    });
    expect(ok.error).toBeUndefined();
    expect(ok.end_time).toBeGreaterThanOrEqual(ok.start_time);
    // The receiver's 503 is its error, not our fault.
    expect(refused).toMatchObject({ annotations: { status: 503 }, error: true });
    expect(refused.fault).toBeUndefined();

    // The AWS calls of the same invocations: the delivery log read and written in DynamoDB. The
    // write follows the POST, so its span may reach the daemon after the POST's.
    const dynamo = () => xrayDocuments().filter((d) => d.name === 'DynamoDB' && d.namespace === 'aws');
    await waitFor('the delivery log write traced', () => dynamo().some((d) => d.aws?.operation === 'UpdateItem'));
    expect(new Set(dynamo().map((d) => d.trace_id))).toEqual(new Set([TRACE_ROOT]));
    expect(dynamo().map((d) => d.aws?.operation)).toEqual(expect.arrayContaining(['GetItem', 'UpdateItem']));

    for (const request of [...healthy.received, ...failing.received])
      expect(Object.keys(request.headers).map((h) => h.toLowerCase())).not.toContain('x-amzn-trace-id');
  });
});
