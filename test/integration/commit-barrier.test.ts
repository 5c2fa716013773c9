import { randomUUID } from 'node:crypto';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db, rawDb, tableName } from '#db/core/client.ts';

/**
 * The local commit barrier (emulation/local/commit-barrier.ts) reaches the product's DynamoDB
 * client from outside, through the hook every AWS client is announced to (shared/aws-clients.ts):
 * this worker installed it (test/fixtures/env.ts), so the client db() builds carries it, and a
 * successful transaction is followed by the barrier's PutItem before its caller sees the result.
 */
describe('the local commit barrier on the product client', () => {
  it('follows every successful TransactWriteItems with a PutItem of the barrier item', async () => {
    const sent: string[] = [];
    rawDb().middlewareStack.add(
      (next, context) => async (args) => {
        sent.push(context.commandName ?? '?');
        return next(args);
      },
      { step: 'initialize', name: 'commitBarrierTestRecorder', priority: 'high' },
    );
    try {
      expect(
        rawDb()
          .middlewareStack.identify()
          .some((m) => m.startsWith('localCommitBarrier')),
      ).toBe(true);
      await db().send(
        new TransactWriteCommand({
          TransactItems: [{ Put: { TableName: tableName(), Item: { pk: 'TEST#barrier', sk: randomUUID() } } }],
        }),
      );
      expect(sent).toEqual(['TransactWriteItemsCommand', 'PutItemCommand']);
    } finally {
      rawDb().middlewareStack.remove('commitBarrierTestRecorder');
    }
  });
});
