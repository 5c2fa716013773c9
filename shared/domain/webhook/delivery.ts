/**
 * One webhook delivery: an event for one key. The delivery log (`webhooks deliveries`) is made
 * of these records, kept 30 days; each holds the exact body it sends, so that a redelivery weeks
 * later needs nothing else (outbox events expire after 30 days).
 *
 * Rounds: `webhooks redeliver` starts a new round (a fresh retry schedule and a new queue
 * message). Messages carry their round; a message of an older round is stale and dropped, so a
 * redelivery never runs two schedules side by side. `attempts` counts every attempt of every
 * round (the log's story), `round_attempts` only this round's (the schedule's position).
 */
export type DeliveryState = 'pending' | 'delivered' | 'failed';

export interface Delivery {
  key_id: number;
  event_id: string;
  event_type: string;
  store_id: string;
  state: DeliveryState;
  attempts: number;
  round: number;
  round_attempts: number;
  /** The highest round whose queue message was sent; null until the first one was. */
  queued_round: number | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  delivered_at: string | null;
  /** Set while the delivery waits for its parked endpoint (pending, not attempted). */
  parked_at: string | null;
  /** The request body, byte for byte the same on every attempt. */
  body: string;
}

/**
 * A delivery not attempted yet: pending in its first round and due `now`. `queued_round` is null
 * while no queue message was sent for it (the fan-out queues it next), or 0 when whoever makes it
 * attempts it at once (an ordered run).
 */
export function newDelivery(
  of: Pick<Delivery, 'key_id' | 'event_id' | 'event_type' | 'store_id' | 'queued_round' | 'body'>,
  now: string,
): Delivery {
  return {
    ...of,
    state: 'pending',
    attempts: 0,
    round: 0,
    round_attempts: 0,
    last_status_code: null,
    last_error: null,
    created_at: now,
    updated_at: now,
    next_attempt_at: now,
    last_attempt_at: null,
    delivered_at: null,
    parked_at: null,
  };
}

export const DELIVERY_TTL_SECONDS = 30 * 24 * 60 * 60;

/** Grace period of a rotated webhook secret: deliveries carry both signatures meanwhile. */
export const WEBHOOK_SECRET_GRACE_SECONDS = 24 * 60 * 60;

/** What the admin CLI shows (never the body: it holds customer data). */
export function deliveryView(d: Delivery) {
  return {
    event_id: d.event_id,
    type: d.event_type,
    attempts: d.attempts,
    last_status_code: d.last_status_code,
    last_error: d.last_error,
    state: d.state,
    created_at: d.created_at,
    updated_at: d.updated_at,
    next_attempt_at: d.next_attempt_at,
    delivered_at: d.delivered_at,
    parked_at: d.parked_at,
    redeliveries: d.round,
  };
}
export type DeliveryView = ReturnType<typeof deliveryView>;

/**
 * The SQS message body: which delivery to attempt. Everything else is read from the log.
 * `due_at` is set on the delayed copies that carry a wait longer than one queue delay: until
 * then, each copy only sends the next one (retry.ts).
 */
export interface DeliveryMessage {
  event_id: string;
  key_id: number;
  round: number;
  due_at?: string;
  /** Times the slow lane put it back because its endpoint had every attempt slot taken (endpoint.ts). */
  deferred?: number;
}

/** The message that asks for a delivery's current round: no wait carried, none deferred. */
export const messageOf = (d: Pick<DeliveryMessage, 'event_id' | 'key_id' | 'round'>): DeliveryMessage => ({
  event_id: d.event_id,
  key_id: d.key_id,
  round: d.round,
});

export function parseDeliveryMessage(body: string): DeliveryMessage {
  const m = JSON.parse(body) as Partial<DeliveryMessage>;
  if (typeof m.event_id !== 'string' || !Number.isInteger(m.key_id) || !Number.isInteger(m.round)) {
    throw new Error('not a delivery message');
  }
  if (m.due_at !== undefined && (typeof m.due_at !== 'string' || Number.isNaN(Date.parse(m.due_at)))) {
    throw new Error('not a delivery message: due_at is not a time');
  }
  const message: DeliveryMessage = { event_id: m.event_id, key_id: m.key_id as number, round: m.round as number };
  if (m.due_at !== undefined) message.due_at = m.due_at;
  if (Number.isInteger(m.deferred) && (m.deferred as number) > 0) message.deferred = m.deferred as number;
  return message;
}

/** Secrets to sign with, newest first: the previous one only while its grace period runs. */
export function signingSecrets(
  key: {
    webhook_secret: string;
    previous_webhook_secret: string | null;
    previous_webhook_secret_expires_at: string | null;
  },
  now: Date,
): string[] {
  const previousValid =
    key.previous_webhook_secret !== null &&
    key.previous_webhook_secret_expires_at !== null &&
    Date.parse(key.previous_webhook_secret_expires_at) > now.getTime();
  return previousValid ? [key.webhook_secret, key.previous_webhook_secret as string] : [key.webhook_secret];
}

// Field order of the body a receiver sees (docs/contract.md#webhooks, docs/contract.md#orders). A DynamoDB map does not keep
// its keys' order, so the body is laid out here once, when the delivery is created.
const FIELD_ORDER: Record<string, readonly string[]> = {
  '': ['id', 'sequence', 'type', 'timestamp', 'origin', 'changed_fields', 'data'],
  data: ['order', 'previous_status', 'status'],
  'data.order': [
    'id',
    'reference',
    'status',
    'currency_code',
    'customer',
    'items',
    'subtotal',
    'shipping_total',
    'discount_total',
    'total',
    'paid_total',
    'created_at',
    'updated_at',
  ],
  'data.order.customer': ['name', 'email', 'phone'],
  'data.order.items[]': ['product_id', 'offer_id', 'sku', 'name', 'quantity', 'price', 'total'],
};

function ordered(value: unknown, path: string): unknown {
  if (Array.isArray(value)) return value.map((v) => ordered(v, `${path}[]`));
  if (value === null || typeof value !== 'object') return value;
  const obj = value as Record<string, unknown>;
  const known = FIELD_ORDER[path] ?? [];
  const names = [
    ...known.filter((k) => k in obj),
    ...Object.keys(obj)
      .filter((k) => !known.includes(k))
      .sort(),
  ];
  return Object.fromEntries(names.map((k) => [k, ordered(obj[k], path === '' ? k : `${path}.${k}`)]));
}

/** The webhook body of an outbox event's payload: compact JSON, fields in contract order. */
export function eventBody(payload: Record<string, unknown>): string {
  return JSON.stringify(ordered(payload, ''));
}
