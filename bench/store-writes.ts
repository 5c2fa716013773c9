/**
 * DynamoDB Local's own ceiling for writes, with no code of ours in the path: items a second
 * through TransactWriteItems of 100 conditional Puts (the shape of a batch's insert groups) and
 * through BatchWriteItem of 25 Puts (the shape of the name indexer's postings), with 1, 10 and 50
 * writers each keeping one call in flight for BENCH_SECONDS (5). The store is a fresh one in
 * memory with the service's table (its index and stream: emulation/local/bootstrap.ts), called
 * straight through the SDK, after BENCH_WARM_UP_SECONDS (20) of transactions while its JVM
 * compiles. What the creates and hot sections can show locally is bounded by these figures.
 */
import {
  BatchWriteItemCommand,
  CreateTableCommand,
  DynamoDBClient,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { createTableInput, waitForStore } from '#emulation/local/bootstrap.ts';
import { startDynamoDbLocal } from '#emulation/local/dynamodb-local.ts';
import { freePort } from '#fixtures/free-port.ts';
import { percentile } from './bench-stack.ts';
import { SECONDS } from './saturate.ts';
import type { BenchSection } from './section.ts';

const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? 20);
const WRITERS = [1, 10, 50];
const TABLE = 'store-writes';

export const storeWritesSection: BenchSection = {
  name: 'store',
  async run() {
    const store = startDynamoDbLocal({ port: await freePort(), dataDir: null });
    const client = new DynamoDBClient({
      endpoint: store.endpoint,
      region: 'local',
      credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
    });
    try {
      await waitForStore(120_000, { client, tableName: TABLE });
      await client.send(new CreateTableCommand(createTableInput(TABLE)));
      let serial = 0;
      // About the size of a product item; each key new, so every condition holds.
      const item = () => {
        const n = ++serial;
        return { pk: { S: `BENCH#${n}` }, sk: { S: 'ITEM' }, name: { S: `Item ${n}` }, body: { S: 'x'.repeat(400) } };
      };
      const transact = () =>
        client.send(
          new TransactWriteItemsCommand({
            TransactItems: Array.from({ length: 100 }, () => ({
              Put: { TableName: TABLE, Item: item(), ConditionExpression: 'attribute_not_exists(pk)' },
            })),
          }),
        );
      const batchWrite = () =>
        client.send(
          new BatchWriteItemCommand({
            RequestItems: { [TABLE]: Array.from({ length: 25 }, () => ({ PutRequest: { Item: item() } })) },
          }),
        );
      const writes = [
        { name: 'TransactWriteItems, 100 conditional Puts', items: 100, send: transact },
        { name: 'BatchWriteItem, 25 Puts', items: 25, send: batchWrite },
      ];
      await load(10, WARM_UP_SECONDS, transact);
      const rows: string[] = [];
      for (const write of writes)
        for (const writers of WRITERS) {
          const run = await load(writers, SECONDS, write.send);
          rows.push(
            `| ${write.name} | ${writers} | ${((run.calls * write.items) / run.seconds).toFixed(0)} | ${run.p50.toFixed(0)} |\n`,
          );
        }
      return (
        "## DynamoDB Local's own write ceiling\n\n" +
        `Straight through the SDK, no code of ours: a fresh store in memory with the service's table, each writer one call in flight for ${SECONDS} s, ` +
        `after ${WARM_UP_SECONDS} s of transactions from 10 writers.\n\n` +
        '| write | writers | items/s | call p50 ms |\n|---|---|---|---|\n' +
        rows.join('')
      );
    } finally {
      client.destroy();
      await store.stop();
    }
  },
};

/** `writers` loops, each sending its next call when the last one answered, for `seconds`. */
async function load(
  writers: number,
  seconds: number,
  send: () => Promise<unknown>,
): Promise<{ calls: number; seconds: number; p50: number }> {
  const latencies: number[] = [];
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (performance.now() < until) {
        const sent = performance.now();
        await send();
        latencies.push(performance.now() - sent);
      }
    }),
  );
  return {
    calls: latencies.length,
    seconds: (performance.now() - started) / 1000,
    p50: percentile(latencies, 50),
  };
}
