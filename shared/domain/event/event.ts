import { randomUUID } from 'node:crypto';
import type { Ability } from '../key/abilities.ts';

/**
 * The store's event log (docs/webhooks.md, "Events"): one event per change a key can read,
 * written as an outbox item in the same transaction as the change, numbered afterwards by the
 * stream consumer (`sequence`, per store, no holes) and kept 30 days. A write that changes
 * nothing writes no event, so a replay or a losing racer raises none.
 */
export const ORDER_EVENT_TYPES = ['order.created', 'order.paid', 'order.status_changed'] as const;
const CATALOG_EVENT_TYPES = [
  'product.created',
  'product.updated',
  'product.stock_changed',
  'category.upserted',
  'tag.upserted',
] as const;
const CONTENT_EVENT_TYPES = ['page.published', 'page.unpublished'] as const;
/** Every type a key can subscribe to or list, in the order the docs list them. */
export const EVENT_TYPES = [...ORDER_EVENT_TYPES, ...CATALOG_EVENT_TYPES, ...CONTENT_EVENT_TYPES] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const isEventType = (value: string): value is EventType => (EVENT_TYPES as readonly string[]).includes(value);

/**
 * What changed (docs/webhooks.md, "What changed"): the event types that carry `changed_fields`,
 * each with the write-shape names it may list, in the order they are listed. A product's are the
 * fields of its PUT body; a page's those of its PUT body plus `status` (publish and unpublish move
 * it); a category's and a tag's their one PUT field; an order's the field of its status route.
 */
export const CHANGED_FIELD_NAMES = {
  'product.updated': [
    'name',
    'sku',
    'price',
    'quantity',
    'description',
    'status',
    'image_url',
    'category_external_ids',
    'tag_external_ids',
  ],
  'page.published': ['type', 'title', 'slug', 'body', 'status'],
  'page.unpublished': ['type', 'title', 'slug', 'body', 'status'],
  'category.upserted': ['name'],
  'tag.upserted': ['value'],
  'order.status_changed': ['status'],
} as const satisfies Partial<Record<EventType, readonly string[]>>;

export type TrackedEventType = keyof typeof CHANGED_FIELD_NAMES;

export const isTracked = (type: string): type is TrackedEventType => Object.hasOwn(CHANGED_FIELD_NAMES, type);

/** The read ability a key needs to see an event of this type. */
export function abilityFor(type: string): Ability | undefined {
  if (type.startsWith('order.')) return 'orders:read';
  if (type.startsWith('product.') || type.startsWith('category.') || type.startsWith('tag.')) return 'catalog:read';
  if (type.startsWith('page.')) return 'content:read';
  return undefined;
}

export const canSee = (abilities: readonly string[], type: string): boolean => {
  const needed = abilityFor(type);
  return needed !== undefined && abilities.includes(needed);
};

/** Who caused a change: a key, the store's own admin, or the storefront (a shopper, the payment side). */
export type Origin = { kind: 'key'; key_id: number } | { kind: 'admin' } | { kind: 'storefront' };

export const keyOrigin = (keyId: number): Origin => ({ kind: 'key', key_id: keyId });
export const ADMIN_ORIGIN: Origin = { kind: 'admin' };
export const STOREFRONT_ORIGIN: Origin = { kind: 'storefront' };

/** Events are kept 30 days; a cursor older than that is 410 cursor_expired. */
export const EVENT_RETENTION_SECONDS = 30 * 24 * 60 * 60;

/** The webhook body and the `/events` item share this payload (the log adds `id` and `sequence`). */
export interface EventPayload {
  type: string;
  timestamp: string;
  /** The write-shape names the change moved, on the types of CHANGED_FIELD_NAMES only. */
  changed_fields?: string[];
  data: Record<string, unknown>;
}

/** The outbox item's fields (the repository adds the keys and `type`). */
export interface StoreEvent {
  event_id: string;
  event_type: string;
  store_id: string;
  created_at: string;
  /** Epoch seconds. */
  ttl: number;
  origin: Origin;
  payload: EventPayload;
  /** For product events: the key whose external id names the product, and that id (only that key sees it). */
  owner_key_id?: number | null;
  external_id?: string | null;
  /**
   * For order events: the id of the event the order's previous version raised (null for
   * `order.created`). The express lane numbers that one first, so an order's events keep their
   * order whichever path numbers them (docs/webhooks.md, "Order events first").
   */
  follows?: string | null;
}

export const newEventId = () => `evt_${randomUUID().replace(/-/g, '')}`;

export function buildEvent(
  type: EventType,
  storeId: string,
  data: Record<string, unknown>,
  at: Date | string,
  origin: Origin,
  eventId: string = newEventId(),
): StoreEvent {
  const when = typeof at === 'string' ? new Date(at) : at;
  const createdAt = when.toISOString();
  return {
    event_id: eventId,
    event_type: type,
    store_id: storeId,
    created_at: createdAt,
    ttl: Math.floor(when.getTime() / 1000) + EVENT_RETENTION_SECONDS,
    origin,
    payload: { type, timestamp: createdAt, data },
  };
}

/**
 * The names of `type` whose values differ between `before` (undefined: the record is new, so
 * every name changed) and `after`, in the listed order. Values are primitives or arrays of them,
 * so their JSON tells them apart.
 */
export function changedFields(
  type: TrackedEventType,
  before: Record<string, unknown> | undefined,
  after: Record<string, unknown>,
): string[] {
  const names: readonly string[] = CHANGED_FIELD_NAMES[type];
  if (before === undefined) return [...names];
  return names.filter((n) => JSON.stringify(before[n] ?? null) !== JSON.stringify(after[n] ?? null));
}

/** The event with the names its change moved (docs/webhooks.md, "What changed"), beside `type` and `data`. */
export const withChangedFields = <E extends StoreEvent>(event: E, changed: string[]): E => ({
  ...event,
  payload: { ...event.payload, changed_fields: changed },
});

/** A logged event as a reader sees it: the owning key is shown its own external id, nobody else. */
export interface EventView {
  id: string;
  sequence: number;
  type: string;
  timestamp: string;
  origin: Origin | null;
  /** On the types that carry it; null on such an event logged before it was recorded. */
  changed_fields?: string[] | null;
  data: Record<string, unknown>;
}

export function eventView(
  e: {
    event_id: string;
    sequence: number;
    payload: EventPayload;
    origin: Origin | null;
    owner_key_id: number | null;
    external_id: string | null;
  },
  viewerKeyId: number,
): EventView {
  const owner = e.owner_key_id !== null && e.owner_key_id === viewerKeyId && e.external_id !== null;
  // Anyone else is shown no external id, even one a payload holds (page events logged before the
  // owner rode beside the payload carried the owner's).
  const data = Object.fromEntries(
    Object.entries(e.payload.data).map(([k, v]) => {
      if (v === null || typeof v !== 'object') return [k, v];
      if (owner) return [k, { ...v, external_id: e.external_id }];
      return [k, 'external_id' in v ? { ...v, external_id: null } : v];
    }),
  );
  return {
    id: e.event_id,
    sequence: e.sequence,
    type: e.payload.type,
    timestamp: e.payload.timestamp,
    origin: e.origin,
    ...(isTracked(e.payload.type) ? { changed_fields: e.payload.changed_fields ?? null } : {}),
    data,
  };
}

/** Whether `keyId` caused the event (a subscription or list with exclude_own skips it). */
export const causedBy = (origin: Origin | null, keyId: number) => origin?.kind === 'key' && origin.key_id === keyId;
