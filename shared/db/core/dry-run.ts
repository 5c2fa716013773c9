import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/**
 * Dry runs (docs/api.md#dry-runs): the write's own code path runs, reads included, but no write
 * reaches the table. Inside `withoutWrites` every write command (Put, Update, Delete, BatchWrite,
 * TransactWrite) answers as if it had succeeded without being sent, so the use case computes
 * exactly what it would have written and answers it; nothing is stored, so no event (events
 * commit in the write's own transaction), no idempotency record and no sequence step exist
 * afterwards. A counter read back from a faked update is absent: ids of a record that would be
 * created come out unknown (null), which is why a dry run never shows them as real ids.
 */
interface DryRunScope {
  /** Write commands that were held back, by name. */
  held: string[];
}

const scope = new AsyncLocalStorage<DryRunScope>();

export async function withoutWrites<T>(fn: () => Promise<T>): Promise<{ result: T; held: string[] }> {
  const state: DryRunScope = { held: [] };
  const result = await scope.run(state, fn);
  return { result, held: state.held };
}

export const inDryRun = (): boolean => scope.getStore() !== undefined;

const WRITE = /^(Put|Update|Delete|BatchWrite|TransactWrite)/;

/** Installed on every client the product builds (shared/db/core/client.ts). */
export function holdWritesInDryRun(client: DynamoDBClient): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const state = scope.getStore();
      const name = context.commandName ?? '';
      if (!state || !WRITE.test(name)) return next(args);
      state.held.push(name.replace(/Command$/, ''));
      return { output: { $metadata: {}, Attributes: {} }, response: {} } as Awaited<ReturnType<typeof next>>;
    },
    { step: 'initialize', name: 'holdWritesInDryRun', priority: 'high' },
  );
}
