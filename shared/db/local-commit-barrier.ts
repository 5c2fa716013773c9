import { PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { keys } from './keys.ts';
import { config } from '../config.ts';

/**
 * DynamoDB Local (the SQLite-backed jar) answers a successful TransactWriteItems before its SQLite
 * transaction commits once any earlier transaction was cancelled by a condition; the commit
 * happens only when the next write arrives. A kill in between loses a write that was already
 * acknowledged (issue 15; scripts/dynamodb-local-commit-repro.ts shows it on the jar alone).
 *
 * So against a local endpoint every successful TransactWriteItems is followed, before its caller
 * sees the result, by one PutItem of a barrier item: its arrival commits the open transaction,
 * and a PutItem itself commits before it is answered. Never installed against AWS.
 */
export function addLocalCommitBarrier(client: DynamoDBClient, outsideStats: <T>(fn: () => Promise<T>) => Promise<T>): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      if (/^TransactWrite(Items)?Command$/.test(context.commandName ?? '')) {
        // Not part of the request's cost: the barrier does not exist in AWS.
        await outsideStats(() => client.send(new PutItemCommand({ TableName: config().tableName, Item: marshall(keys.localCommitBarrier()) })));
      }
      return out;
    },
    { step: 'initialize', name: 'localCommitBarrier' },
  );
}
