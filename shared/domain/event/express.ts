/**
 * The express lane's message and settings (docs/webhooks.md, "Order events first"): an order write
 * names its event on the express queue, and the fan-out numbers it at once. Shared by the sender
 * (shared/queue/sqs.ts), the consumer (functions/events) and the stack that builds the queue.
 */

/** Messages per invocation of the express lane's consumer (its event-source mapping, and the local poller). */
export const EXPRESS_BATCH_SIZE = 10;
/** An express message older than this is moot: the table stream has delivered its event long before. */
export const EXPRESS_RETENTION_SECONDS = 3600;

/** What an order write asks of the express lane: number and fan out this event now. */
export interface ExpressMessage {
  store_id: string;
  event_id: string;
  /** The event of the same order before it, read with it (OrderEvent.follows). */
  follows?: string | null;
}

/** Parses an express message; throws on anything else (the handler drops it: the stream has the event). */
export function parseExpressMessage(body: string): ExpressMessage {
  const m = JSON.parse(body) as Partial<ExpressMessage>;
  if (typeof m.store_id !== 'string' || typeof m.event_id !== 'string') throw new Error('not an express message');
  return { store_id: m.store_id, event_id: m.event_id, follows: typeof m.follows === 'string' ? m.follows : null };
}
