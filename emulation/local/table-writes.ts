import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { onAwsClient } from '#shared/aws-clients.ts';
import { sleep } from './sleep.ts';

/**
 * The local stream pollers' doorbell. A poller with nothing to read waits for the next write this
 * process makes to DynamoDB (the stack's own Lambdas write almost everything the stream carries),
 * or for its idle time when the write comes from elsewhere (the admin CLI, a test worker).
 *
 * Without it, each poller asked DynamoDB Local for records ten times a second whether or not
 * anything was written, and every stack of `npm test` paid that CPU for its whole life (the figures
 * are in docs/webhooks.md, "Local stack").
 */
const WRITES =
  /^(Put(Item)?|Update(Item)?|Delete(Item)?|BatchWrite(Item)?|TransactWrite(Items)?|ExecuteTransaction|(Batch)?ExecuteStatement)Command$/;

/** The wakes of the pollers waiting now; each leaves the set when it ends, by a write or its idle time. */
const waiting = new Set<() => void>();
let installed = false;
/** Writes seen so far: a poller that read the stream after the Nth need not wait if N has moved. */
let writes = 0;

/** This process's DynamoDB writes so far; a poller takes it before it reads the stream. */
export const tableWritesSoFar = (): number => writes;

function rang(): void {
  writes += 1;
  for (const wake of [...waiting]) wake();
}

/** Rings the doorbell after every write of every DynamoDB client of this process; once. */
export function installTableWriteSignal(): void {
  if (installed) return;
  installed = true;
  onAwsClient((client) => {
    if (!(client instanceof DynamoDBClient)) return;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        try {
          return await next(args);
        } finally {
          if (WRITES.test(context.commandName ?? '')) rang();
        }
      },
      { step: 'initialize', name: 'localTableWriteSignal' },
    );
  });
}

/**
 * How long an idle poller waits before it looks again on its own: once a second where the doorbell
 * rings (the local stack), for the writes of other processes; four times a second where it does not
 * (the rehearsal, whose Lambdas run in workers of their own), as Lambda polls a stream's shard.
 */
const IDLE_WITH_SIGNAL_MS = 1000;
const IDLE_WITHOUT_SIGNAL_MS = 250;

/**
 * Ends at this process's next DynamoDB write after the `seen`th (at once if it already happened),
 * after the idle time, or when `signal` aborts, whichever is first.
 */
export function nextTableWrite(seen: number, signal: AbortSignal): Promise<void> {
  if (writes !== seen) return Promise.resolve();
  const idle = installed ? IDLE_WITH_SIGNAL_MS : IDLE_WITHOUT_SIGNAL_MS;
  return new Promise<void>((resolve) => {
    const wake = () => {
      waiting.delete(wake);
      resolve();
    };
    waiting.add(wake);
    void sleep(idle, signal).then(wake);
  });
}
