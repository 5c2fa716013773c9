import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#db/core/client.ts';
import { keys } from '#db/keys.ts';
import { generateWebhookSecret } from '#domain/key/api-key.ts';
import { adminCommand, createKey, createStore } from '#fixtures/api.ts';
import { putOutboxEvent, startReceiver, verify, waitFor } from '#fixtures/webhooks.ts';

/**
 * Webhook secrets at rest: the admin path seals them (here with the local stand-in for KMS, the
 * test stack's AES-GCM key file), the table never holds the plaintext, and the signer (in the
 * stack's own pipeline) opens them to sign; plaintext secrets from before still sign.
 */
const storedKey = async (id: number) =>
  (await db().send(new GetCommand({ TableName: tableName(), Key: keys.key(id), ConsistentRead: true }))).Item ?? {};

describe('webhooks: secrets encrypted at rest', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
  });
  const deliveredTo = async (eventId: string) =>
    waitFor('the delivery', () => receiver.received.find((r) => r.headers['webhook-id'] === eventId));

  it("stores a new key's secret sealed, and deliveries are signed with the plaintext the admin showed", async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, ['orders:read'], { webhook_url: receiver.url });
    const stored = String((await storedKey(key.id)).webhook_secret);
    expect(stored).toMatch(/^aesgcm:[A-Za-z0-9+/]+=*$/);
    expect(stored).not.toContain(key.webhook_secret.slice('whsec_'.length));
    const { eventId } = await putOutboxEvent(storeId);
    const request = await deliveredTo(eventId);
    expect(() => verify(key.webhook_secret, request)).not.toThrow();
  });

  it('seals the rotated secret and moves the previous one as stored; both signatures verify', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, ['orders:read'], { webhook_url: receiver.url });
    const before = String((await storedKey(key.id)).webhook_secret);
    const rotated = await adminCommand<{ webhook_secret: string }>('keys rotate-webhook-secret', { id: key.id });
    const item = await storedKey(key.id);
    expect(item.previous_webhook_secret).toBe(before);
    expect(String(item.webhook_secret)).toMatch(/^aesgcm:/);
    expect(String(item.webhook_secret)).not.toContain(rotated.webhook_secret.slice('whsec_'.length));
    const { eventId } = await putOutboxEvent(storeId);
    const request = await deliveredTo(eventId);
    expect(request.headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(() => verify(rotated.webhook_secret, request)).not.toThrow();
    expect(() => verify(key.webhook_secret, request)).not.toThrow();
  });

  it('still signs with a plaintext secret stored before encryption was on', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, ['orders:read'], { webhook_url: receiver.url });
    const legacy = generateWebhookSecret();
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.key(key.id),
        UpdateExpression: 'SET webhook_secret = :s',
        ExpressionAttributeValues: { ':s': legacy },
      }),
    );
    const { eventId } = await putOutboxEvent(storeId);
    const request = await deliveredTo(eventId);
    expect(() => verify(legacy, request)).not.toThrow();
    expect(() => verify(key.webhook_secret, request)).toThrow();
  });
});
