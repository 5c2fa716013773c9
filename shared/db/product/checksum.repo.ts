import type { RequestContext } from '#shared/context.ts';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '../core/client.ts';
import type { Item } from '../core/helpers.ts';
import { keys } from '../keys.ts';

/** One product of a key as its external-id link names it; `checksum` and `updated_at` are absent on a link older than them. */
export interface ChecksumEntry {
  id: number;
  external_id: string;
  checksum: string | undefined;
  updated_at: string | undefined;
}

/**
 * Up to `limit` of a key's product links after external id `after`, in external-id order (the
 * links' sort key), and whether more follow. A Query of the key's own partition under
 * `XID#product#`, eventually consistent, projecting the id, the stored checksum and the copy's
 * `updated_at` (a projection saves transfer, not units: DynamoDB counts the whole link items read,
 * docs/catalog-writes.md#checksums). One item more than the page is read to know whether another
 * page follows; a Query answers at most 1 MB, so a page of large links may take a second call.
 */
export async function productChecksumPage(
  ctx: RequestContext,
  keyId: number,
  after: string | undefined,
  limit: number,
): Promise<{ entries: ChecksumEntry[]; more: boolean }> {
  const prefix = keys.externalId(keyId, 'product', '');
  const items: Item[] = [];
  let start: Item | undefined = after === undefined ? undefined : keys.externalId(keyId, 'product', after);
  do {
    const out = await send(
      ctx,
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': prefix.pk, ':prefix': prefix.sk },
        ExpressionAttributeNames: { '#p': 'product' },
        ProjectionExpression: 'sk, record_id, checksum, #p.updated_at',
        Limit: limit + 1 - items.length,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start && items.length <= limit);
  const entries = items.slice(0, limit).map(
    (item): ChecksumEntry => ({
      id: Number(item.record_id),
      external_id: String(item.sk).slice(prefix.sk.length),
      checksum: item.checksum,
      updated_at: item.product?.updated_at,
    }),
  );
  return { entries, more: items.length > limit };
}
