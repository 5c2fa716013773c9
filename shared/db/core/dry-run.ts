import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/**
 * Dry runs (docs/api.md#dry-runs): the write's own code path runs, reads included, but no write
 * reaches the table. A call sent with a dry-run context (`ctx.dryRun`) that writes (Put, Update,
 * Delete, BatchWrite, TransactWrite) answers as if it had succeeded without being sent, so the
 * use case computes exactly what it would have written and answers it; nothing is stored, so no
 * event (events commit in the write's own transaction), no idempotency record and no sequence
 * step exist afterwards. A counter read back from a faked update is absent: ids of a record that
 * would be created come out unknown (null), which is why a dry run never shows them as real ids.
 */
const WRITE = /^(Put|Update|Delete|BatchWrite|TransactWrite)/;

/** Installed on every client the product builds (shared/db/core/client.ts); `contextOf` finds a call's request context. */
export function holdWritesInDryRun(
  client: DynamoDBClient,
  contextOf: (context: object) => { dryRun: boolean } | undefined,
): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName ?? '';
      if (!contextOf(context)?.dryRun || !WRITE.test(name)) return next(args);
      return { output: { $metadata: {}, Attributes: {} }, response: {} } as Awaited<ReturnType<typeof next>>;
    },
    { step: 'initialize', name: 'holdWritesInDryRun', priority: 'high' },
  );
}
