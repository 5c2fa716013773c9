import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#db/client.ts';
import { keys as dbKeys } from '#db/keys.ts';
import { BUCKET_HEAD_ATTRIBUTE, bucketAttribute, isRateAttribute, ringOf } from '#domain/key/rate-limit.ts';
import { itemSize } from './billing-units.ts';
import { saturate, SECONDS, WARM_UP_SECONDS } from './saturate.ts';

/**
 * What the token item's size costs the authorizer's call: the write that admits a request (a
 * conditional UpdateItem returning the whole item) on copies of the run's token items, once with
 * the ring as stored (five attributes) and once with the same counts one attribute per second, the
 * ring's previous form. Each with its CPU in the stack and in DynamoDB Local.
 */
export async function tokenItemSizes(tokenHashes: string[], storePid: number | undefined): Promise<string> {
  const items = await Promise.all(
    tokenHashes.map(async (hash) => {
      const out = await db().send(
        new GetCommand({ TableName: tableName(), Key: dbKeys.token(hash), ConsistentRead: true }),
      );
      return out.Item as Record<string, unknown>;
    }),
  );
  const perSecond = (item: Record<string, unknown>) => {
    const ring = ringOf(item);
    const rest = Object.fromEntries(Object.entries(item).filter(([name]) => !isRateAttribute(name)));
    if (ring.head === undefined) return rest;
    return {
      ...rest,
      [BUCKET_HEAD_ATTRIBUTE]: ring.head,
      ...Object.fromEntries([...ring.counts].map(([second, count]) => [bucketAttribute(second), count])),
    };
  };
  const copies = async (shape: (item: Record<string, unknown>) => Record<string, unknown>) => {
    const written: Array<Record<string, unknown>> = [];
    for (const item of items) {
      const copy = { ...shape(item), ...dbKeys.token(randomBytes(32).toString('hex')) };
      await db().send(new PutCommand({ TableName: tableName(), Item: copy }));
      written.push(copy);
    }
    const mean = (f: (item: Record<string, unknown>) => number) =>
      written.reduce((t, i) => t + f(i), 0) / written.length;
    const admit = async (i: number) => {
      const item = written[i % written.length]!;
      const out = await db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: { pk: item.pk, sk: item.sk },
          UpdateExpression: 'SET last_used_at = :iso ADD uses :one',
          ConditionExpression: '#status = :active',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':iso': new Date().toISOString(), ':one': 1, ':active': 'active' },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return out.Attributes !== undefined;
    };
    await saturate(admit, WARM_UP_SECONDS / 5);
    return {
      attributes: mean((i) => Object.keys(i).length),
      bytes: mean((i) => itemSize(i)),
      run: await saturate(admit, SECONDS, storePid),
    };
  };
  const [stored, previous] = [await copies((item) => item), await copies(perSecond)];
  const line = (name: string, c: typeof stored) =>
    `| ${name} | ${c.attributes.toFixed(0)} | ${c.bytes.toFixed(0)} | ${c.run.perSecond.toFixed(0)} | ${c.run.cpuMsPerRequest.toFixed(2)} | ${c.run.storeCpuMsPerRequest?.toFixed(2) ?? 'n/a'} |\n`;
  return (
    "**The token item's size.** The write that admits a request (a conditional UpdateItem that returns the whole item for the container's cache) " +
    "on copies of the run's token items: with the rate-limit ring as stored (five attributes, shared/domain/key/rate-limit.ts), and with the same counts " +
    'one attribute per second, as the ring kept them before:\n\n' +
    '| token items | attributes (mean) | bytes (mean) | requests/s | stack CPU ms/request | DynamoDB Local CPU ms/request |\n|---|---|---|---|---|---|\n' +
    line('ring in five attributes', stored) +
    line('one attribute per second (previous form)', previous)
  );
}
