import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { ENTITY, TABLE } from '../core/table.ts';
import { matchesFilter } from '../core/stream-filter.ts';
import type { PendingName } from './repo.ts';

/**
 * Which table-stream records reach the name indexer: a pending name written (a new product, or a
 * rename; a rename before the indexer ran is a MODIFY). One definition for the CDK event-source
 * mapping and the local stream poller, as for the outbox.
 */
export const NAME_PENDING_STREAM_FILTER = {
  eventName: ['INSERT', 'MODIFY'],
  dynamodb: { NewImage: { [TABLE.typeAttribute]: { S: [ENTITY.namePending] } } },
} as const;

export const isPendingNameWrite = (record: unknown) => matchesFilter(NAME_PENDING_STREAM_FILTER, record);

/** Throws on an image that names no product: a poison record, for the stream's failure path. */
export function pendingNameFromImage(image: Record<string, unknown>): PendingName {
  const item = unmarshall(image as Record<string, AttributeValue>);
  if (typeof item.store_id !== 'string' || !Number.isInteger(item.product_id))
    throw new Error(`malformed pending name ${String(item.pk)} ${String(item.sk)}`);
  return { storeId: item.store_id, productId: item.product_id as number };
}
