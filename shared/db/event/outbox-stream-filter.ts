import { ENTITY, TABLE } from '../core/table.ts';
import { matchesFilter } from '../core/stream-filter.ts';

/**
 * Which table-stream records reach the fan-out Lambda: INSERTs of outbox items. Kept as the data
 * of a Lambda event-filter pattern so that the CDK event-source mapping
 * (`FilterCriteria.filter(OUTBOX_STREAM_FILTER)`) and the local stream poller
 * (`matchesFilter`) apply one definition and cannot drift apart.
 *
 * Updates and deletes of outbox items (a TTL expiry is a REMOVE) are not events; neither is any
 * other entity's write.
 */
export const OUTBOX_STREAM_FILTER = {
  eventName: ['INSERT'],
  dynamodb: { NewImage: { [TABLE.typeAttribute]: { S: [ENTITY.outbox] } } },
} as const;

export const isOutboxInsert = (record: unknown) => matchesFilter(OUTBOX_STREAM_FILTER, record);

/**
 * Outbox records per fan-out invocation, in AWS (the mapping's batch size) and locally (the
 * stream poller's). A store's events of one batch are numbered in a few transactions and fanned
 * out side by side, so a larger batch drains a bulk import's backlog faster; docs/webhooks.md,
 * "Latency during an import", has the figures.
 */
export const OUTBOX_BATCH_SIZE = 100;
