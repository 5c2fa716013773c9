import type { RequestContext } from '#shared/context.ts';
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '../core/client.ts';
import { keys } from '../keys.ts';
import type { Item } from '../core/helpers.ts';
import { nameLookup } from '#domain/product/name-grams.ts';
import { normalizeName } from '#domain/product/product.ts';
import { DomainError } from '#domain/errors.ts';

/**
 * filter[name]: ids of the products whose normalized name contains the normalized needle, read
 * from the trigram postings (name-index/repo.ts) so that the cost follows the matches, not the
 * catalog. Every posting holds its product's normalized name, so the list read is checked for
 * the exact substring without reading a product.
 *
 * Strongly consistent, both reads: a product's name is either in the postings or still pending
 * (written in the product's own transaction; the indexer removes the entry only after its
 * postings are written). The pending entries are read FIRST: a name pending then is taken from
 * there; a name not pending then was in the postings already, or was renamed during this request.
 * An eventually consistent postings read could miss a product whose entry the indexer removed a
 * moment ago, so exactness (and read-your-writes) rules it out; the budget is counted in strongly
 * consistent units (docs/api.md, "Product reads").
 *
 * Every search reads at most SEARCH_READ_BUDGET_RCU. A needle whose candidates do not fit is
 * answered `too_broad`, never in part (the use case refuses it: 422 filter_too_broad); a pending
 * partition too large to read (a bulk import or a reindex being taken in) answers 503 until the
 * indexer has caught up.
 */
export const SEARCH_READ_BUDGET_RCU = 50;

/** Items of each list's first page: a rare trigram's whole list usually fits. */
const FIRST_PAGE = 32;
/** Then pages of the one list read on, growing (each also bounded by what is left of the budget). */
const NEXT_PAGES = [256, 1024, 4096];
const STRONG_UNIT_BYTES = 4096;
/** A first guess at a posting's size, until a page says (postings hold the name: ~60-150 bytes). */
const FIRST_ITEM_BYTES_GUESS = 160;

type Posting = { id: number; name: string };

/** The candidates of a needle do not fit in the search's read budget: nothing is answered. */
export type TooBroad = { kind: 'too_broad' };
const TOO_BROAD: TooBroad = { kind: 'too_broad' };

const toPosting = (item: Item): Posting => ({ id: keys.nameGramProductId(String(item.sk)), name: String(item.n) });

/** The units left to this search, and the largest item size seen, to size the next pages. */
class ReadBudget {
  left = SEARCH_READ_BUDGET_RCU;
  itemBytes = FIRST_ITEM_BYTES_GUESS;

  /** Items a page may ask for with `units` of the budget: 0 when not even one fits. */
  itemsFor(units: number, wanted: number): number {
    // One unit is the minimum a page costs, however few items it holds.
    if (units < 1) return 0;
    return Math.max(0, Math.min(wanted, Math.floor(((units - 1) * STRONG_UNIT_BYTES) / this.itemBytes) + 1));
  }

  charge(consumed: number | undefined, items: number, limit: number): void {
    // DynamoDB rounds a page up to whole 4 KB units: consumed/items bounds the item size from above.
    const units = consumed ?? Math.ceil((items * this.itemBytes) / STRONG_UNIT_BYTES);
    this.left -= units;
    if (items === limit && items > 0)
      this.itemBytes = Math.max(64, Math.min(this.itemBytes, Math.ceil((units * STRONG_UNIT_BYTES) / items)));
  }
}

async function page(ctx: RequestContext, input: QueryCommandInput, budget: ReadBudget, limit: number) {
  const out = await send(
    ctx,
    new QueryCommand({ ...input, Limit: limit, ConsistentRead: true, ReturnConsumedCapacity: 'TOTAL' }),
  );
  const items = out.Items ?? [];
  budget.charge(out.ConsumedCapacity?.CapacityUnits ?? out.ConsumedCapacity?.ReadCapacityUnits, items.length, limit);
  return { items, next: out.LastEvaluatedKey };
}

export async function productIdsByName(
  ctx: RequestContext,
  storeId: string,
  needle: string,
): Promise<number[] | TooBroad> {
  const wanted = normalizeName(needle);
  const budget = new ReadBudget();
  const pendingNames = new Map(
    (await pendingEntries(ctx, storeId, budget)).map((i) => [Number(i.product_id), String(i.n)]),
  );
  const candidates = await candidatePostings(ctx, storeId, wanted, budget);
  if (!Array.isArray(candidates)) return candidates;
  const ids = new Set<number>();
  for (const posting of candidates) {
    if (!pendingNames.has(posting.id) && posting.name.includes(wanted)) ids.add(posting.id);
  }
  for (const [id, name] of pendingNames) if (name.includes(wanted)) ids.add(id);
  return [...ids].sort((a, b) => a - b);
}

/** The whole pending partition, in pages within half the budget. */
async function pendingEntries(ctx: RequestContext, storeId: string, budget: ReadBudget): Promise<Item[]> {
  const input = {
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.namePendingPartition(storeId) },
  };
  const items: Item[] = [];
  let start: Item | undefined;
  for (;;) {
    const limit = budget.itemsFor(budget.left - SEARCH_READ_BUDGET_RCU / 2, 1000);
    if (limit === 0) {
      throw new DomainError(
        'service_unavailable',
        'Product names are being indexed (a bulk import or a reindex): name search is unavailable for a moment; retry after 5 s.',
        null,
        5,
      );
    }
    const out = await page(ctx, { ...input, ExclusiveStartKey: start }, budget, limit);
    items.push(...out.items);
    start = out.next;
    if (!start) return items;
  }
}

/** Postings that include every product whose name contains `wanted` (non-empty, normalized). */
function candidatePostings(
  ctx: RequestContext,
  storeId: string,
  wanted: string,
  budget: ReadBudget,
): Promise<Posting[] | TooBroad> {
  const lookup = nameLookup(wanted);
  const list = (gram: string, prefix: string) => ({
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.nameGramPartition(storeId, gram), ':prefix': prefix },
  });
  // One or two letters: every trigram that starts with them, one list in one partition.
  if (lookup.kind === 'prefix') return shortestList(ctx, [list(lookup.prefix, lookup.prefix)], budget);
  return shortestList(
    ctx,
    lookup.grams.map((gram) => list(gram, `${gram}#`)),
    budget,
  );
}

/**
 * The complete list of one of these queries (each holds every match). A first page of each, side
 * by side, finishes a rare trigram's list at once; otherwise only the sparsest list is read on:
 * postings are sorted by product id, so the list whose first page reached the highest id holds
 * the fewest products per id, and no per-trigram counter (a hot item every write would contend
 * on) is needed to find it. It does not fit in the budget: the needle is too broad.
 */
async function shortestList(
  ctx: RequestContext,
  inputs: QueryCommandInput[],
  budget: ReadBudget,
): Promise<Posting[] | TooBroad> {
  const lists = inputs.map((input) => ({
    input,
    items: [] as Item[],
    start: undefined as Item | undefined,
    done: false,
  }));
  const first = budget.itemsFor(budget.left / lists.length, FIRST_PAGE);
  if (first === 0) return TOO_BROAD;
  await Promise.all(
    lists.map(async (list) => {
      const out = await page(ctx, list.input, budget, first);
      list.items.push(...out.items);
      list.start = out.next;
      list.done = !out.next;
    }),
  );
  const complete = lists.filter((l) => l.done).sort((a, b) => a.items.length - b.items.length)[0];
  if (complete) return complete.items.map(toPosting);
  const lastId = (list: (typeof lists)[number]) => keys.nameGramProductId(String(list.items.at(-1)?.sk ?? '#0'));
  const sparsest = lists.sort((a, b) => lastId(b) - lastId(a))[0]!;
  for (let nextPage = 0; !sparsest.done; nextPage++) {
    const limit = budget.itemsFor(budget.left, NEXT_PAGES[Math.min(nextPage, NEXT_PAGES.length - 1)] as number);
    if (limit === 0) return TOO_BROAD;
    const out = await page(ctx, { ...sparsest.input, ExclusiveStartKey: sparsest.start }, budget, limit);
    sparsest.items.push(...out.items);
    sparsest.start = out.next;
    sparsest.done = !out.next;
  }
  return sparsest.items.map(toPosting);
}
