import { isRateAttribute, type KeyRecord } from '#domain/key/api-key.ts';
import type { Destination } from '#domain/key/destination.ts';
import { storedEvents } from '#domain/webhook/event-subscription.ts';
import type { Item } from '../core/helpers.ts';
import { keys } from '../keys.ts';
import { ENTITY } from '../core/table.ts';

/**
 * Where a key's events go is stored in `webhook_url`, the attribute gsi1 projects (shared/db/core/
 * table.ts; a projection change rebuilds the index), so that the fan-out, which lists a store's keys
 * from the index, sees every key that receives events and of which kind, with no read more:
 *
 *   webhook_url = https://…                          a webhook (as before destinations existed)
 *               = arn:aws:sqs:<region>:<account>:<q>  an SQS queue (`destination_queue_url`: its URL)
 *               = arn:aws:events:…:event-bus/<b>      an EventBridge bus
 *
 * The role (`destination_role_arn`) and the queue URL live on the key item only: the signer reads
 * the whole item, and a key listed from gsi1 has them empty.
 */
const SQS_TARGET = 'arn:aws:sqs:';
const EVENTBRIDGE_TARGET = 'arn:aws:events:';

function destinationOf(item: Item): Destination | null {
  const target = item.webhook_url;
  if (typeof target !== 'string' || target === '') return null;
  const role = typeof item.destination_role_arn === 'string' ? item.destination_role_arn : '';
  if (target.startsWith(SQS_TARGET))
    return {
      kind: 'sqs',
      queue_arn: target,
      queue_url: typeof item.destination_queue_url === 'string' ? item.destination_queue_url : '',
      role_arn: role,
      fifo: target.endsWith('.fifo'),
    };
  if (target.startsWith(EVENTBRIDGE_TARGET)) return { kind: 'eventbridge', bus_arn: target, role_arn: role };
  return { kind: 'webhook', url: target };
}

/** The stored attributes of a destination (null removes it): what `SET` writes and `REMOVE` clears. */
export function destinationAttributes(d: Destination | null, orderedFrom: number | null) {
  return {
    webhook_url: d === null ? null : d.kind === 'webhook' ? d.url : d.kind === 'sqs' ? d.queue_arn : d.bus_arn,
    destination_queue_url: d?.kind === 'sqs' ? d.queue_url : null,
    destination_role_arn: d !== null && d.kind !== 'webhook' ? d.role_arn : null,
    destination_ordered_from: d?.kind === 'sqs' && d.fifo ? orderedFrom : null,
  };
}

/** A key item as the record the admin handler and the webhook path use. */
export function toKeyRecord(item: Item, lastUsedAt: string | null = null): KeyRecord {
  const destination = destinationOf(item);
  return {
    id: item.id,
    store_id: item.store_id,
    name: item.name,
    abilities: item.abilities,
    status: item.status,
    webhook_url: destination?.kind === 'webhook' ? destination.url : null,
    destination,
    aws_external_id: typeof item.aws_external_id === 'string' ? item.aws_external_id : null,
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
    ordered_from: typeof item.destination_ordered_from === 'number' ? item.destination_ordered_from : null,
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
  const { last_used_at: _l, destination, ordered_from, webhook_url: _w, ...stored } = record;
  const { webhook_url, ...others } = destinationAttributes(destination, ordered_from);
  // The others absent rather than null: a key without them has no such attributes (as before destinations).
  const present = Object.fromEntries(Object.entries(others).filter(([, v]) => v !== null));
  return {
    ...keys.key(record.id),
    ...keys.keyIndexEntry(record.store_id, record.id),
    type: ENTITY.key,
    ...stored,
    webhook_url,
    ...present,
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
