import type { RequestContext } from '#shared/context.ts';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { OAuthClient } from '#domain/oauth/oauth.ts';
import { send, tableName } from '../core/client.ts';
import type { TransactItem } from '../core/helpers.ts';
import { ENTITY, TABLE } from '../core/table.ts';
import { keys } from '../keys.ts';
import { ttlOf } from './write.ts';

/**
 * Clients registered with RFC 7591 (docs/oauth.md#items-in-the-single-table), kept `keepSeconds`
 * (a day until the client gets a token: keepClientAction).
 */
export async function putClient(
  ctx: RequestContext,
  client: OAuthClient,
  nowMs: number,
  keepSeconds: number,
): Promise<void> {
  await send(
    ctx,
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

export async function getClient(
  ctx: RequestContext,
  clientId: string,
  nowMs: number,
): Promise<OAuthClient | undefined> {
  const out = await send(ctx, new GetCommand({ TableName: tableName(), Key: keys.oauthClient(clientId) }));
  const i = out.Item;
  if (!i || i.ttl * 1000 <= nowMs) return undefined;
  return { client_id: i.client_id, client_name: i.client_name, redirect_uris: i.redirect_uris };
}

/** How long a client that got a token is kept: until `untilMs` (docs/oauth.md#bounds). */
export interface KeepClient {
  clientId: string;
  nowMs: number;
  untilMs: number;
}

/**
 * The action that keeps a registered client until `untilMs`, for the transaction that issues its
 * tokens: its condition fails rather than shorten the client's life or bring back one already gone
 * (expired, whether or not the TTL sweep removed it yet).
 */
export function keepClientAction(keep: KeepClient): TransactItem {
  return {
    Update: {
      TableName: tableName(),
      Key: keys.oauthClient(keep.clientId),
      UpdateExpression: 'SET #ttl = :ttl',
      ConditionExpression: 'attribute_exists(pk) AND #ttl > :now AND #ttl <= :ttl',
      ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute },
      ExpressionAttributeValues: { ':ttl': ttlOf(keep.untilMs), ':now': Math.floor(keep.nowMs / 1000) },
    },
  };
}
