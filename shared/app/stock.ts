import type { RequestContext } from '#shared/context.ts';
import { commitStockChange, readStockTarget } from '#db/product/stock.repo.ts';
import { decideStockDelta, type StockDelta } from '#domain/product/stock.ts';
import { productNotFound, toMappedProduct } from '#domain/product/product.ts';
import { keyOrigin } from '#domain/event/event.ts';
import { stockChangedEvent } from '#domain/event/product.ts';
import { refused, type Refused } from '#domain/outcome.ts';
import { failedCondition, productChecksum, type WriteCondition } from '#domain/product/checksum.ts';
import { backoff, done, retryOnStale, stale } from './contention.ts';
import type { Caller } from '#domain/principal.ts';
import {
  afterTaken,
  answered,
  checkRecord,
  prepareAnswer,
  type Idempotent,
  type IdempotencyCheck,
  type IdempotentRequest,
} from './idempotent-commit.ts';

export type StockDocument = {
  data: ReturnType<typeof toMappedProduct> & { offers: NonNullable<ReturnType<typeof toMappedProduct>['offers']> };
};

/**
 * What a stock delta did: its answer or an idempotency refusal, refused by its If-Match /
 * If-None-Match against the product the round decided from, or refused by the stock itself (no such
 * product or variant, quantity_changed, insufficient_stock, past the maximum); nothing written.
 */
export type StockOutcome =
  | Idempotent<StockDocument>
  | { kind: 'precondition_failed'; header: 'If-Match' | 'If-None-Match' }
  | Refused;

/**
 * A stock delta (docs/catalog-writes.md#stock-deltas): one BatchGetItem reads the key's link
 * (with the product's copy) and the request's idempotency record; the record is checked (a
 * replay, a reused key or a twin in progress is the result); then the request's condition
 * (If-Match, as on PATCH) against the stored product's checksum, after the record so that a
 * retry of a delta that went through replays its answer although its own write changed the
 * checksum; the domain decides from the stored quantity; and the new quantity, its `product.stock_changed` event and the stored answer commit
 * in one transaction guarded on the product as it was read. A racing write makes the round
 * stale, and the next round decides again from what that write left: of 50 deltas of -1 on a
 * quantity of 30, exactly 30 commit and 20 find nothing left. A refusal (409 quantity_changed,
 * 422 insufficient_stock) writes nothing, and the HTTP front stores it as the request's answer.
 */
export function adjustStock(
  ctx: RequestContext,
  caller: Caller & { currency: string | null },
  externalId: string,
  delta: StockDelta,
  request: IdempotentRequest,
  condition: WriteCondition = {},
): Promise<StockOutcome> {
  type Read = Awaited<ReturnType<typeof readStockTarget>>;
  let lost = 0;
  return retryOnStale<Read, StockOutcome>({
    budget: ctx,
    what: `stock of product ${externalId} of key ${caller.keyId}`,
    read: () => readStockTarget(ctx, caller.storeId, caller.keyId, externalId, request.recordKey),
    round: async (read) => {
      const check: IdempotencyCheck = checkRecord(request, read.alongside);
      if (check.kind !== 'fresh') return done(check);
      const current = read.product;
      if (!current) return done(productNotFound());
      // Checked in every round against the state it decides from: a racing write that commits
      // first makes this round stale, and the next one checks again on what it left.
      const failed = failedCondition(condition, productChecksum(current));
      if (failed) return done({ kind: 'precondition_failed', header: failed });
      const decision = decideStockDelta(current, delta, Date.now());
      switch (decision.kind) {
        case 'no_variant':
          return done(
            refused(
              'validation_failed',
              decision.sku === undefined
                ? 'The product has no variant to adjust.'
                : `The product has no variant with sku ${decision.sku}.`,
              'sku',
            ),
          );
        case 'quantity_changed':
          return done(
            refused(
              'quantity_changed',
              `The variant holds ${decision.quantity}, not expected_quantity ${delta.expected_quantity}; nothing was changed.`,
              'expected_quantity',
            ),
          );
        case 'insufficient_stock':
          return done(
            refused(
              'insufficient_stock',
              `The variant holds ${decision.quantity}; a delta of ${delta.delta} would take it below 0. Nothing was changed.`,
              'delta',
            ),
          );
        case 'above_maximum':
          return done(
            refused(
              'validation_failed',
              `The variant holds ${decision.quantity}; a delta of ${delta.delta} would take it past ${Number.MAX_SAFE_INTEGER}.`,
              'delta',
            ),
          );
      }
      const { next, offer, index } = decision;
      const mapped = toMappedProduct(next, caller.currency, true);
      const document = { data: { ...mapped, offers: mapped.offers ?? [] } };
      const prepared = prepareAnswer(request, { body: document });
      const event = stockChangedEvent(next, offer, delta.delta, keyOrigin(caller.keyId));
      if (ctx.dryRun) return done(answered(document, prepared.response));
      const commit = await commitStockChange(ctx, current, next, index, event, [prepared.write]);
      if (commit.kind === 'committed') return done(answered(document, prepared.response));
      if (commit.kind === 'guard_failed') return done(await afterTaken(ctx, request, commit.busy));
      if (!commit.current) return stale();
      // Every loser of a round got the same state back: a jittered, growing wait spreads their
      // next attempts, or all of them would race again for the one commit the next round allows.
      await backoff(ctx, ++lost);
      return stale({ product: commit.current, alongside: read.alongside });
    },
  });
}
