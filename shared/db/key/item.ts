import { isRateAttribute, type KeyRecord } from '#domain/key/api-key.ts';
import { storedEvents } from '#domain/webhook/event-subscription.ts';
import type { Item } from '../core/helpers.ts';
import { keys } from '../keys.ts';
import { ENTITY } from '../core/table.ts';

/** A key item as the record the admin handler and the webhook path use. */
export function toKeyRecord(item: Item, lastUsedAt: string | null = null): KeyRecord {
  return {
    id: item.id,
    store_id: item.store_id,
    name: item.name,
    abilities: item.abilities,
    status: item.status,
    webhook_url: item.webhook_url ?? null,
    events: storedEvents(item.events),
    exclude_own: item.exclude_own === true,
    mcp: item.mcp === 'read-only' ? 'read-only' : 'full',
    writes_per_hour: item.writes_per_hour ?? null,
    status_changes_per_hour: item.status_changes_per_hour ?? null,
    created_at: item.created_at,
    revoked_at: item.revoked_at ?? null,
    last_used_at: lastUsedAt,
    ...(item.kind === 'grant' ? { kind: 'grant' as const, client_id: item.client_id } : {}),
    token_hash: item.token_hash,
    webhook_secret: item.webhook_secret,
    previous_webhook_secret: item.previous_webhook_secret ?? null,
    previous_webhook_secret_expires_at: item.previous_webhook_secret_expires_at ?? null,
  };
}

/**
 * The key item as stored: the record under its id and in its store's index, without
 * `last_used_at` (the token item keeps that); `extra` for what only some keys have (a grant's).
 */
export function keyItem(record: KeyRecord, extra: Item = {}) {
  const { last_used_at: _l, ...stored } = record;
  return {
    ...keys.key(record.id),
    ...keys.keyIndexEntry(record.store_id, record.id),
    type: ENTITY.key,
    ...stored,
    ...extra,
  };
}

/** The item the authorizer reads (key/auth.repo.ts): a copy of what a request needs to know. */
export function tokenItem(record: KeyRecord, currency: string | null, carried: Item = {}) {
  return {
    ...keys.token(record.token_hash),
    type: ENTITY.token,
    key_id: record.id,
    store_id: record.store_id,
    abilities: record.abilities,
    mcp: record.mcp,
    writes_per_hour: record.writes_per_hour,
    status_changes_per_hour: record.status_changes_per_hour,
    currency_code: currency,
    status: record.status,
    last_used_at: carried.last_used_at ?? null,
    // The rate-limit ring moves with the key: rotating is no way around the allowance.
    ...Object.fromEntries(Object.entries(carried).filter(([k]) => isRateAttribute(k))),
  };
}
