import type { RequestContext } from '#shared/context.ts';
import type { DynamoDBRecord } from 'aws-lambda';
import { isPendingNameWrite, pendingNameFromImage } from '#db/name-index/stream.ts';
import { indexPendingNames } from '#db/name-index/repo.ts';

/**
 * Indexed, or the record the stream must resume from and why (that record and every one after it
 * come again; the ones before it are done).
 */
export type NameIndexOutcome =
  | { ok: true; indexed: number }
  | { ok: false; indexed: number; retryFrom: string; sequenceNumber: string | undefined; error: unknown };

/**
 * Names indexed together, each chunk's pending entries removed before the next chunk starts. A
 * search reads the store's whole pending partition and answers 503 while it is too large for its
 * budget (about 900 entries, shared/db/name-index/search.repo.ts), so what brings filter[name] back
 * after a bulk import is the partition shrinking. Indexed a whole batch (up to 1,000 names) at a
 * time, it shrank only once every posting of the batch was written, so the search stayed refused
 * for the whole batch; in chunks it shrinks as the indexer goes, at nearly the same write rate (a
 * chunk of 100 names of ~20 characters is ~80 BatchWriteItem calls, 5 rounds of the repository's
 * 16 writers). docs/catalog-writes.md, "Name search after an import", has the figures.
 */
export const NAME_INDEX_CHUNK = 100;

/**
 * The name indexer's use case (filter[name]'s trigram postings, see shared/db/name-index/repo.ts).
 * The event-source mapping passes only pending-name writes; the same filter runs here too. If a
 * chunk fails, the stream resumes from that chunk's first record: indexing is idempotent, and until
 * it succeeds the search reads the pending entries, so no result is ever wrong.
 */
export async function indexNameRecords(
  ctx: RequestContext,
  records: readonly DynamoDBRecord[],
): Promise<NameIndexOutcome> {
  const pending = records.filter((r) => isPendingNameWrite(r) && r.dynamodb?.NewImage);
  let indexed = 0;
  for (let start = 0; start < pending.length; start += NAME_INDEX_CHUNK) {
    const chunk = pending.slice(start, start + NAME_INDEX_CHUNK);
    try {
      indexed += await indexPendingNames(
        ctx,
        chunk.map((r) => pendingNameFromImage(r.dynamodb!.NewImage!)),
      );
    } catch (error) {
      const sequenceNumber = chunk[0]!.dynamodb!.SequenceNumber;
      return { ok: false, indexed, retryFrom: sequenceNumber ?? '', sequenceNumber, error };
    }
  }
  return { ok: true, indexed };
}
