import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { onAwsClient } from '#shared/aws-clients.ts';
import { config } from '#shared/config.ts';

/**
 * DynamoDB Local (the SQLite-backed jar) answers a successful TransactWriteItems before its SQLite
 * transaction commits once any earlier transaction was cancelled by a condition; the commit
 * happens only when the next write arrives. A kill in between loses a write that was already
 * acknowledged (issue 15; scripts/dynamodb-local-commit-repro.ts shows it on the jar alone).
 *
 * So against a local endpoint every successful TransactWriteItems is followed, before its caller
 * sees the result, by one PutItem of a barrier item: its arrival commits the open transaction,
 * and a PutItem itself commits before it is answered. The product's client knows nothing of it:
 * every process that writes to DynamoDB Local (the local stack, the admin CLI in local mode, the
 * integration test workers) installs it here, and AWS never sees it.
 */
const BARRIER_KEY = { pk: 'LOCAL#COMMIT', sk: 'BARRIER' };

function addCommitBarrier(client: DynamoDBClient): void {
  if (config().dynamodbEndpoint === undefined) return;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      if (/^TransactWrite(Items)?Command$/.test(context.commandName ?? '')) {
        // Sent on the client itself, with no request context: not part of the request's cost
        // (shared/db/core/client.ts counts only calls sent with one), as the barrier does not exist in AWS.
        await client.send(new PutItemCommand({ TableName: config().tableName, Item: marshall(BARRIER_KEY) }));
      }
      return out;
    },
    { step: 'initialize', name: 'localCommitBarrier' },
  );
}

let installed = false;

/** Adds the barrier to every DynamoDB client of this process that points at a local endpoint; once. */
export function installLocalCommitBarrier(): void {
  if (installed) return;
  installed = true;
  // Every AWS client the product builds is announced (shared/aws-clients.ts); the barrier is for DynamoDB's.
  onAwsClient((client) => {
    if (client instanceof DynamoDBClient) addCommitBarrier(client);
  });
}
