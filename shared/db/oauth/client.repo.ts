import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { OAuthClient } from '#domain/oauth/oauth.ts';
import { db, tableName } from '../core/client.ts';
import { ENTITY } from '../core/table.ts';
import { keys } from '../keys.ts';
import { conditionalWrite, ttlOf } from './write.ts';

/**
 * Clients registered with RFC 7591 (docs/oauth.md#items-in-the-single-table), kept `keepSeconds`
 * (a day until the client gets a token: keepClient).
 */
export async function putClient(client: OAuthClient, nowMs: number, keepSeconds: number): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.oauthClient(client.client_id),
        type: ENTITY.oauthClient,
        ...client,
        ttl: ttlOf(nowMs) + keepSeconds,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

export async function getClient(clientId: string, nowMs: number): Promise<OAuthClient | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.oauthClient(clientId) }));
  const i = out.Item;
  if (!i || i.ttl * 1000 <= nowMs) return undefined;
  return { client_id: i.client_id, client_name: i.client_name, redirect_uris: i.redirect_uris };
}

/**
 * Keeps a registered client until `untilMs` (a client that got a token keeps its registration);
 * never shortens it and never brings back one already gone.
 */
export async function keepClient(clientId: string, nowMs: number, untilMs: number): Promise<void> {
  await conditionalWrite(() =>
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.oauthClient(clientId),
        UpdateExpression: 'SET #ttl = :ttl',
        ConditionExpression: 'attribute_exists(pk) AND #ttl > :now AND #ttl < :ttl',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':ttl': ttlOf(untilMs), ':now': Math.floor(nowMs / 1000) },
      }),
    ),
  );
}
