/**
 * Every AWS SDK client the product builds (DynamoDB, SQS, KMS, SNS) is announced here as it is
 * created, so that whoever instruments them does it without the modules that build them knowing:
 * the webhook signer hands each one to Powertools Tracer (functions/webhooks/tracing.ts), and the
 * local stack adds its commit barrier to DynamoDB's (emulation/local/commit-barrier.ts). A hook
 * also sees the clients built before it was added. A leaf: it imports nothing.
 */
type AwsClient = object;
type Hook = (client: AwsClient) => void;

const hooks: Hook[] = [];
const built: AwsClient[] = [];

/** Runs `hook` on every client built so far and on each one built from now on. */
export function onAwsClient(hook: Hook): void {
  hooks.push(hook);
  for (const client of built) hook(client);
}

/** Called by the module that builds a client, once, before its first use. */
export function awsClientBuilt<T extends AwsClient>(client: T): T {
  built.push(client);
  for (const hook of hooks) hook(client);
  return client;
}

/** A client destroyed (a test swapping endpoints) is forgotten, so no hook meets it again. */
export function awsClientDropped(client: AwsClient | undefined): void {
  const at = client === undefined ? -1 : built.indexOf(client);
  if (at >= 0) built.splice(at, 1);
}
