import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { adminCommand, createKey, createStore } from '#fixtures/api.ts';
import { placeOrder } from '#fixtures/orders.ts';
import { deliveries, waitFor } from '#fixtures/webhooks.ts';
import { integratorSide, INTEGRATOR_ACCOUNT } from '#fixtures/destinations.ts';

/**
 * SQS and EventBridge destinations as deployed, IAM enforced (docs/rehearsal.md): the signer function
 * assumes the integrator's role through STS, where its own policy is checked (roles named
 * store-events-*, an external id of ours, another account) and then the role's trust; the role's
 * session sends, checked against the role's own policies, put as in the CloudFormation snippet of
 * docs/destinations.md. `webhooks ping` goes admin function → Lambda Invoke → signer.
 */
const endpoints = { sqs: inject('sqsEndpoint'), integrator: inject('integratorEndpoint') };
const side = integratorSide(endpoints);
afterAll(() => side.close());

type Key = Awaited<ReturnType<typeof createKey>> & { aws_external_id: string };
const SIGNER_ROLE = inject('signerRoleArn');

/** The role as docs/destinations.md's CloudFormation snippet makes it: trust and one policy. */
async function role(externalId: string, action: string, resource: string): Promise<string> {
  const arn = `arn:aws:iam::${INTEGRATOR_ACCOUNT}:role/store-events-${externalId.slice(-8)}`;
  const res = await fetch(`${endpoints.integrator}/_local/roles?arn=${encodeURIComponent(arn)}`, {
    method: 'PUT',
    body: JSON.stringify({
      AssumeRolePolicyDocument: {
        Version: '2012-10-17',
        Statement: [
          {
            Effect: 'Allow',
            Principal: { AWS: SIGNER_ROLE },
            Action: 'sts:AssumeRole',
            Condition: { StringEquals: { 'sts:ExternalId': externalId } },
          },
        ],
      },
      Policies: [
        {
          PolicyName: 'deliver',
          PolicyDocument: {
            Version: '2012-10-17',
            Statement: [{ Effect: 'Allow', Action: action, Resource: resource }],
          },
        },
      ],
    }),
  });
  expect(res.status).toBe(200);
  return arn;
}

/** The queue's ARN in the integrator's account, where the rehearsal places an integrator's queue (emulation/rehearsal/proxy.ts). */
const queueArn = (url: string) => `arn:aws:sqs:us-east-1:${INTEGRATOR_ACCOUNT}:${url.split('/').pop()}`;

describe('destinations in the rehearsal', () => {
  it('delivers into a queue and onto a bus through the role, and the role’s policy decides the send', async () => {
    const store = await createStore();
    const [queued, bussed, narrow] = (await Promise.all(
      [0, 1, 2].map(() => createKey(store, ['orders:read'], { events: 'order.created' })),
    )) as Key[];
    const queueUrl = await side.queue(true);
    const busArn = await side.bus();
    await adminCommand('keys set-destination', {
      id: queued!.id,
      sqs_queue_url: queueUrl,
      role_arn: await role(queued!.aws_external_id, 'sqs:SendMessage', queueArn(queueUrl)),
    });
    await adminCommand('keys set-destination', {
      id: bussed!.id,
      eventbridge_bus_arn: busArn,
      role_arn: await role(bussed!.aws_external_id, 'events:PutEvents', busArn),
    });
    // Allowed to send to another queue only: the send is refused by the role's own policy.
    const elsewhere = await side.queue(false);
    await adminCommand('keys set-destination', {
      id: narrow!.id,
      sqs_queue_url: queueUrl,
      role_arn: await role(narrow!.aws_external_id, 'sqs:SendMessage', queueArn(elsewhere)),
    });

    const order = await placeOrder(store);
    const onQueue: string[] = [];
    await waitFor(
      'the order on the queue',
      async () => {
        onQueue.push(...(await side.drain(queueUrl)).map((m) => m.Body!));
        return onQueue.length > 0;
      },
      120_000,
      500,
    );
    expect(JSON.parse(onQueue[0]!)).toMatchObject({
      type: 'order.created',
      data: { order: { reference: order.reference } },
    });
    await waitFor('the order on the bus', async () => (await side.busEvents(busArn)).length > 0, 120_000, 500);
    await waitFor(
      'the narrow role’s refusal in the log',
      async () => (await deliveries(narrow!.id))[0]?.last_error?.includes('AccessDenied') ?? false,
      120_000,
      500,
    );
    const [refused] = await deliveries(narrow!.id);
    expect(refused!.last_error).toMatch(
      /^SendMessage to arn:aws:sqs:.*: AccessDenied.*not authorized to perform: sqs:SendMessage/,
    );
    expect(onQueue).toHaveLength(1);
  });

  it('pings a queue through the admin function, which asks the signer (Lambda Invoke, IAM checked)', async () => {
    const store = await createStore();
    const key = (await createKey(store, ['orders:read'])) as Key;
    const queueUrl = await side.queue(false);
    await adminCommand('keys set-destination', {
      id: key.id,
      sqs_queue_url: queueUrl,
      role_arn: await role(key.aws_external_id, 'sqs:SendMessage', queueArn(queueUrl)),
    });
    const lambda = new LambdaClient({
      region: 'us-east-1',
      endpoint: inject('rehearsalUrl'),
      credentials: { accessKeyId: 'operator', secretAccessKey: 'local' },
    });
    try {
      const out = await lambda.send(
        new InvokeCommand({
          FunctionName: inject('adminFunctionName'),
          Payload: Buffer.from(JSON.stringify({ command: 'webhooks ping', args: { id: key.id } })),
        }),
      );
      const answer = JSON.parse(Buffer.from(out.Payload!).toString('utf8'));
      expect(answer).toMatchObject({ ok: true, data: { type: 'webhook.ping', delivered: true, status: 200 } });
    } finally {
      lambda.destroy();
    }
    const [message] = await side.drain(queueUrl);
    expect(JSON.parse(message!.Body!)).toMatchObject({ type: 'webhook.ping', data: { key_id: key.id } });
  });
});
