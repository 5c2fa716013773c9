import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#db/core/client.ts';
import { keys as dbKeys } from '#db/keys.ts';
import { bucketAttribute, HEAD_ATTRIBUTE, isRateAttribute, RING_SIZE, secondOf } from '#domain/key/api-key.ts';
import { itemSize } from './billing-units.ts';
import { type Run, saturate, SECONDS, WARM_UP_SECONDS } from './saturate.ts';

/**
 * What the token item's size costs the authorizer's call: the write that admits a request (a
 * conditional UpdateItem returning the whole item) on copies of the run's token items as they are,
 * with no rate-limit ring at all (the most a more compact ring could save), and as a busy key's,
 * one count for each of the window's 61 seconds (the ring at its largest). Each shape runs twice,
 * the order reversed the second time so that a store still warming up favours none, with its
 * CPU in the stack and in DynamoDB Local averaged over both.
 */
export async function tokenItemSizes(tokenHashes: string[], storePid: number | undefined): Promise<string> {
  type Item = Record<string, unknown>;
  const items = await Promise.all(
    tokenHashes.map(async (hash) => {
      const out = await db().send(
        new GetCommand({ TableName: tableName(), Key: dbKeys.token(hash), ConsistentRead: true }),
      );
      return out.Item as Item;
    }),
  );
  const withoutRing = (item: Item) => Object.fromEntries(Object.entries(item).filter(([n]) => !isRateAttribute(n)));
  const busy = (item: Item): Item => {
    const head = secondOf(Date.now());
    return {
      ...withoutRing(item),
      [HEAD_ATTRIBUTE]: head,
      ...Object.fromEntries(Array.from({ length: RING_SIZE }, (_, i) => [bucketAttribute(head - i), 1])),
    };
  };
  const shapes = [
    { name: "the run's, as they are", shape: (item: Item) => item },
    { name: "the run's, without the ring", shape: withoutRing },
    { name: "a busy key's: a count in each of the window's 61 seconds", shape: busy },
  ].map(({ name, shape }) => ({
    name,
    written: items.map((item) => ({ ...shape(item), ...dbKeys.token(randomBytes(32).toString('hex')) })),
  }));
  for (const { written } of shapes)
    for (const copy of written) await db().send(new PutCommand({ TableName: tableName(), Item: copy }));
  const admit = (written: Item[]) => async (i: number) => {
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
  for (const { written } of shapes) await saturate(admit(written), WARM_UP_SECONDS / 10);
  const runs = new Map<string, Run[]>(shapes.map(({ name }) => [name, []]));
  for (const order of [shapes, [...shapes].reverse()])
    for (const { name, written } of order) runs.get(name)!.push(await saturate(admit(written), SECONDS, storePid));
  const mean = (xs: number[]) => xs.reduce((t, x) => t + x, 0) / xs.length;
  const line = ({ name, written }: (typeof shapes)[number]) => {
    const r = runs.get(name)!;
    const store = r.every((x) => x.storeCpuMsPerRequest !== undefined)
      ? mean(r.map((x) => x.storeCpuMsPerRequest!)).toFixed(2)
      : 'n/a';
    return (
      `| ${name} | ${mean(written.map((i) => Object.keys(i).length)).toFixed(0)} | ${mean(written.map(itemSize)).toFixed(0)} ` +
      `| ${mean(r.map((x) => x.perSecond)).toFixed(0)} | ${mean(r.map((x) => x.cpuMsPerRequest)).toFixed(2)} | ${store} |\n`
    );
  };
  return (
    "**The token item's size.** The write that admits a request (a conditional UpdateItem that returns the whole item for the container's cache) " +
    "on copies of the run's token items: as they are, without the rate-limit ring (one attribute per second that saw a request, shared/domain/key/api-key.ts), " +
    "and as a busy key's, whose ring holds all 61 seconds. " +
    `Each row is the mean of two ${SECONDS} s runs, the second pass in reverse order:\n\n` +
    '| token items | attributes (mean) | bytes (mean) | requests/s | stack CPU ms/request | DynamoDB Local CPU ms/request |\n|---|---|---|---|---|---|\n' +
    shapes.map(line).join('')
  );
}
