import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';
import { keys } from './keys.ts';
import { queryAll, type Item } from './helpers.ts';
import { nameLookup } from '../domain/product/name-grams.ts';
import { normalizeName } from '../domain/product/product.ts';

/**
 * filter[name]: ids of the products whose normalized name contains the normalized needle, read
 * from the trigram postings (name-index.repo.ts) so that the cost follows the matches, not the
 * catalog. Every posting holds its product's normalized name, so the list read is checked for
 * the exact substring without reading a product.
 *
 * Strongly consistent: a product's name is either in the postings or still pending (written in
 * the product's own transaction; the indexer removes the entry only after its postings are
 * written). The pending entries are read FIRST: a name pending then is taken from there; a name
 * not pending then was in the postings already, or was renamed during this request (and the
 * posting read gives the old or the new name, both answers a concurrent read may give).
 */

/** Items a probe asks for in each round: a rare trigram's whole list usually fits the first. */
const PROBE_ROUNDS = [32, 256, 2048];

type Posting = { id: number; name: string };

const toPosting = (item: Item): Posting => ({ id: keys.nameGramProductId(String(item.sk)), name: String(item.n) });

export async function productIdsByName(storeId: string, needle: string): Promise<number[]> {
  const wanted = normalizeName(needle);
  const pending = await queryAll({
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.namePendingPartition(storeId) },
    ConsistentRead: true,
  });
  const pendingNames = new Map(pending.map((i) => [Number(i.product_id), String(i.n)]));
  const ids = new Set<number>();
  for (const posting of await candidatePostings(storeId, wanted)) {
    if (!pendingNames.has(posting.id) && posting.name.includes(wanted)) ids.add(posting.id);
  }
  for (const [id, name] of pendingNames) if (name.includes(wanted)) ids.add(id);
  return [...ids].sort((a, b) => a - b);
}

/** Postings that include every product whose name contains `wanted` (non-empty, normalized). */
async function candidatePostings(storeId: string, wanted: string): Promise<Posting[]> {
  const lookup = nameLookup(wanted);
  if (lookup.kind === 'prefix') {
    const items = await queryAll({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': keys.nameGramPartition(storeId, lookup.prefix), ':prefix': lookup.prefix },
      ConsistentRead: true,
    });
    return items.map(toPosting);
  }
  return shortestList(storeId, lookup.grams);
}

/**
 * The complete posting list of one of `grams`, whichever completes first: all are read side by
 * side in rounds of growing size, so the cost is at most a few times the shortest list's, and no
 * per-trigram counter (a hot item every write would contend on) is needed to find it.
 */
async function shortestList(storeId: string, grams: string[]): Promise<Posting[]> {
  const lists = grams.map((gram) => ({ gram, items: [] as Item[], start: undefined as Item | undefined, done: false }));
  for (let round = 0; ; round++) {
    const limit = PROBE_ROUNDS[round];
    await Promise.all(
      lists.map(async (list) => {
        const out = await db().send(
          new QueryCommand({
            TableName: tableName(),
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :gram)',
            ExpressionAttributeValues: { ':pk': keys.nameGramPartition(storeId, list.gram), ':gram': `${list.gram}#` },
            ConsistentRead: true,
            ExclusiveStartKey: list.start,
            ...(limit ? { Limit: limit } : {}),
          }),
        );
        list.items.push(...(out.Items ?? []));
        list.start = out.LastEvaluatedKey;
        list.done = !out.LastEvaluatedKey;
      }),
    );
    const complete = lists.filter((l) => l.done).sort((a, b) => a.items.length - b.items.length)[0];
    if (complete) return complete.items.map(toPosting);
  }
}
