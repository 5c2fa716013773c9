import type { DynamoDBRecord } from 'aws-lambda';
import { isPendingNameWrite, pendingNameFromImage } from '#db/name-index/stream.ts';
import { indexPendingNames } from '#db/name-index/repo.ts';

/** Indexed, or the record the stream must resume from and why (the whole batch comes again). */
export type NameIndexOutcome =
  | { ok: true; indexed: number }
  | { ok: false; retryFrom: string; sequenceNumber: string | undefined; error: unknown };

/**
 * The name indexer's use case (filter[name]'s trigram postings, see shared/db/name-index/repo.ts).
 * The event-source mapping passes only pending-name writes; the same filter runs here too. A batch
 * is indexed together (one read of every pending entry, postings written 25 at a time); if it
 * fails, the whole batch is retried from its first record: indexing is idempotent, and until it
 * succeeds the search reads the pending entries, so no result is ever wrong.
 */
export async function indexNameRecords(records: readonly DynamoDBRecord[]): Promise<NameIndexOutcome> {
  const pending = records.filter((r) => isPendingNameWrite(r) && r.dynamodb?.NewImage);
  if (pending.length === 0) return { ok: true, indexed: 0 };
  try {
    const indexed = await indexPendingNames(pending.map((r) => pendingNameFromImage(r.dynamodb!.NewImage!)));
    return { ok: true, indexed };
  } catch (error) {
    const sequenceNumber = pending[0]!.dynamodb!.SequenceNumber;
    return { ok: false, retryFrom: sequenceNumber ?? '', sequenceNumber, error };
  }
}
