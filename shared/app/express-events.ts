import type { RequestContext } from '#shared/context.ts';
import { readOutboxEvents, type OutboxEventState } from '#db/event/outbox.repo.ts';
import type { ExpressMessage } from '#domain/event/express.ts';
import { fanOut, prepareStoreBatch } from './fan-out.ts';

/**
 * Order events first (docs/webhooks.md, "Order events first"). The table stream numbers a store's
 * events in commit order, so an order event committed during a bulk import would wait behind the
 * import's thousand catalog events. Instead, an order write also asks the express lane (an SQS
 * queue) to number its event at once and fan it out; the stream consumer, reaching the event
 * later, finds it numbered and its deliveries queued, and does nothing twice. The sequence stays
 * gapless and strictly increasing (every number comes from the same guarded counter); an order
 * event may take a number before catalog events committed just before it, and an order's own
 * events keep their order: each names the one before it (`follows`), and an unnumbered
 * predecessor is numbered first, in the same transaction.
 *
 * The lane is a shortcut, never the guarantee: a message that is lost, late or fails leaves the
 * event to the stream, as before. The order use cases send the message (`expedite` in ./orders.ts);
 * this module is the lane's consumer (functions/events).
 */

/** Predecessors followed at most; an order with more unnumbered events than this is left to the stream. */
const MAX_CHAIN = 5;

export type ExpressOutcome =
  /** Numbered here (with `numbered - 1` predecessors) and fanned out: `queued` deliveries. */
  | { kind: 'expedited'; numbered: number; queued: number }
  /** The stream (or another message) numbered it first: its fan-out is the stream's. */
  | { kind: 'already_numbered' }
  /** No such event (its outbox item expired), or too many predecessors unnumbered: the stream's. */
  | { kind: 'left_to_stream'; reason: 'gone' | 'long_chain' };

/**
 * The event and the unnumbered events of its order before it, oldest first; a predecessor that is
 * numbered, gone (kept 30 days) or unknown (an event written before `follows`) ends the chain.
 */
async function unnumberedChain(
  ctx: RequestContext,
  message: ExpressMessage,
): Promise<OutboxEventState[] | Exclude<ExpressOutcome, { kind: 'expedited' }>> {
  // The event and the one it follows in one read: a longer chain (rare) reads on, one by one.
  const known = await readOutboxEvents(
    ctx,
    message.store_id,
    message.follows ? [message.event_id, message.follows] : [message.event_id],
  );
  const chain: OutboxEventState[] = [];
  for (let id: string | null | undefined = message.event_id; id; ) {
    const state: OutboxEventState | undefined =
      known.get(id) ?? (await readOutboxEvents(ctx, message.store_id, [id])).get(id);
    if (!state) return chain.length === 0 ? { kind: 'left_to_stream', reason: 'gone' } : chain;
    if (state.sequence !== undefined) return chain.length === 0 ? { kind: 'already_numbered' } : chain;
    if (chain.length === MAX_CHAIN) return { kind: 'left_to_stream', reason: 'long_chain' };
    chain.unshift(state);
    id = state.follows;
  }
  return chain;
}

/**
 * One express message: the event's chain numbered together (one guarded transaction, as the
 * stream numbers a batch), then each fanned out with its number. Idempotent like the stream's
 * path: numbering takes a number only for an event that has none, and the delivery log queues a
 * delivery once.
 */
export async function expediteEvent(
  ctx: RequestContext,
  message: ExpressMessage,
  now = new Date().toISOString(),
): Promise<ExpressOutcome> {
  const chain = await unnumberedChain(ctx, message);
  if (!Array.isArray(chain)) return chain;
  const records = chain.map((s) => s.record);
  const batch = await prepareStoreBatch(ctx, message.store_id, records);
  let queued = 0;
  for (const record of records) queued += await fanOut(ctx, record, now, batch);
  return { kind: 'expedited', numbered: records.length, queued };
}
