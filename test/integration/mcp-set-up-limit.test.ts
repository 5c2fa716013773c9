import { describe, expect, it } from 'vitest';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { storeWithKey } from '#fixtures/api.ts';
import { db, tableName } from '#db/core/client.ts';
import { keys } from '#db/keys.ts';
import { ALLOWANCE_RING, bucketAttribute, hashToken, SET_UP_RING, secondOf } from '#domain/key/api-key.ts';
import { handler as authorizer } from '#functions/authorizer/handler.ts';
import { handler as mcpHandler } from '#functions/mcp/handler.ts';
import { lambdaEvent, measureLambda } from '#fixtures/lambda-cost.ts';
import { costOf } from '#fixtures/context.ts';
import type { APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';

/**
 * MCP session set-up (initialize, tools/list, ping, notifications) uses none of the key's
 * allowance but has a generous limit of its own (600 a minute by default, MCP_SET_UP_PER_MINUTE in
 * shared/config.ts; docs/mcp.md#rate-limit), kept with the allowance's conditional write on the
 * token item under other attribute names.
 */
const SET_UP_LIMIT = 600;

const tokenItem = async (token: string) =>
  (await db().send(new GetCommand({ TableName: tableName(), Key: keys.token(hashToken(token)), ConsistentRead: true })))
    .Item ?? {};

describe('MCP set-up limit', () => {
  it('refuses set-up past its own limit with 429 and Retry-After, and tool calls keep the whole allowance', async () => {
    const { key, client: api } = await storeWithKey();
    // 599 set-up requests this second, as a flood would leave them: one remains for the next minute.
    const now = secondOf(Date.now());
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.token(hashToken(key.token)),
        UpdateExpression: 'SET #h = :now, #b = :n',
        ExpressionAttributeNames: { '#h': SET_UP_RING.head, '#b': bucketAttribute(now, SET_UP_RING) },
        ExpressionAttributeValues: { ':now': now, ':n': SET_UP_LIMIT - 1 },
      }),
    );
    // One after another: what is counted is the limit, not how parallel requests meet.
    const answers = [];
    for (const method of ['ping', 'tools/list', 'ping'])
      answers.push(await api.post('/mcp', { jsonrpc: '2.0', id: answers.length, method }));
    expect(answers.map((r) => r.status)).toEqual([200, 429, 429]);
    for (const r of answers.slice(1)) {
      expect(r.body).toEqual({
        code: 'rate_limited',
        message: `This key exceeded its limit of ${SET_UP_LIMIT} MCP set-up requests (initialize, tools/list, ping, notifications) per minute.`,
        field: null,
      });
      const retryAfter = Number(r.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(61);
      expect(r.headers.get('ratelimit-limit')).toBe(String(SET_UP_LIMIT));
    }
    // A notification is set-up too.
    const note = await api.post('/mcp', { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(note.status).toBe(429);

    // The allowance is untouched: the first tool call is the first of 60.
    const item = await tokenItem(key.token);
    expect(item[ALLOWANCE_RING.head]).toBeUndefined();
    const call = await api.post('/mcp', {
      jsonrpc: '2.0',
      id: 'call',
      method: 'tools/call',
      params: { name: 'list_products', arguments: {} },
    });
    expect(call.status).toBe(200);
    expect(call.body.result.isError).toBeFalsy();
    expect(call.headers.get('ratelimit-limit')).toBe('60');
    expect(call.headers.get('ratelimit-remaining')).toBe('59');
  });

  it('counts each admitted set-up request in its own ring, never in the allowance', async () => {
    const { key, client: api } = await storeWithKey();
    const answers = [];
    // Five at a time, 70 in all: more than the allowance of 60.
    for (let i = 0; i < 70; i += 5)
      answers.push(
        ...(await Promise.all(
          Array.from({ length: 5 }, (_, j) => api.post('/mcp', { jsonrpc: '2.0', id: i + j, method: 'ping' })),
        )),
      );
    // More than the allowance of 60, all answered, each showing the allowance as it stands.
    expect(answers.map((r) => r.status)).toEqual(Array(70).fill(200));
    expect(new Set(answers.map((r) => r.headers.get('ratelimit-remaining')))).toEqual(new Set(['60']));
    const item = await tokenItem(key.token);
    const counted = Object.entries(item)
      .filter(([name]) => /^sc.$/.test(name))
      .reduce((sum, [, n]) => sum + (n as number), 0);
    expect(counted).toBe(70);
    expect(Object.keys(item).filter((name) => /^rc.$/.test(name))).toEqual([]);
  });

  it('a set-up request costs the authorizer read and one conditional write; a tool call no more than before', async () => {
    const { storeId, key } = await storeWithKey();
    const headers = {
      authorization: `Bearer ${key.token}`,
      accept: 'application/json',
      'content-type': 'application/json',
    };
    const context = { awsRequestId: 'cost', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;
    const cost = async (body: object) => {
      const auth = await costOf('cost', () =>
        authorizer(
          {
            type: 'REQUEST',
            methodArn: 'arn:aws:execute-api:local:000000000000:local/local/POST/api/v1/integrations/mcp',
            resource: '/api/v1/integrations/mcp',
            path: '/api/v1/integrations/mcp',
            httpMethod: 'POST',
            headers,
            requestContext: {},
          } as unknown as APIGatewayRequestAuthorizerEvent,
          context,
        ),
      );
      const run = await measureLambda(mcpHandler, lambdaEvent(storeId, key.id, 'mcp', { path: '/mcp', body, headers }));
      expect(run.status).toBe(200);
      return [...auth.stats.ops, ...run.stats.ops];
    };
    expect(await cost({ jsonrpc: '2.0', id: 1, method: 'ping' })).toEqual(['GetItem', 'UpdateItem']);
    const call = await cost({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'get_product', arguments: { id: 1 } },
    });
    expect(call.slice(0, 2)).toEqual(['GetItem', 'UpdateItem']);
  });
});
