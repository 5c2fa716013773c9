import { newContext } from '#shared/context.ts';
import { ScanCommand, type ScanCommandInput } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '#db/core/client.ts';
import { ENTITY } from '#db/core/table.ts';
import { LOG_FIELDS, toDelivery } from '#db/webhook/delivery.repo.ts';
import type { Item } from '#db/core/helpers.ts';
import type { Delivery } from '#domain/webhook/delivery.ts';
import type { Endpoint } from '#domain/webhook/endpoint.ts';
import { toEndpoint } from '#db/webhook/endpoint.repo.ts';

/** Every item of a full-table Scan, page by page (queryAll's counterpart; scans exist only here). */
async function scanAll(input: Omit<ScanCommandInput, 'TableName' | 'ExclusiveStartKey'>): Promise<Item[]> {
  const found: Item[] = [];
  let start: Item | undefined;
  do {
    const out = await send(
      newContext(),
      new ScanCommand({ ...input, TableName: tableName(), ExclusiveStartKey: start }),
    );
    found.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return found;
}

/**
 * Local stack only (its queue lives in memory): every delivery still waiting for an attempt,
 * so that a restart can queue them again. A full scan; never used in AWS, where the queue is
 * durable.
 */
export async function scanPendingDeliveries(): Promise<Delivery[]> {
  const items = await scanAll({
    FilterExpression: '#type = :delivery AND #state = :pending',
    ExpressionAttributeNames: { '#type': 'type', '#state': 'state', '#round': 'round' },
    ExpressionAttributeValues: { ':delivery': ENTITY.delivery, ':pending': 'pending' },
    ProjectionExpression: LOG_FIELDS.join(', '),
  });
  return items.map(toDelivery);
}

/** Local stack only (its queue is in memory): parked endpoints, whose probe messages a restart lost. */
export async function scanParkedEndpoints(): Promise<Endpoint[]> {
  const items = await scanAll({
    FilterExpression: '#type = :type AND #state = :parked',
    ExpressionAttributeNames: { '#type': 'type', '#state': 'state' },
    ExpressionAttributeValues: { ':type': ENTITY.webhookEndpoint, ':parked': 'parked' },
  });
  return items.map((i) => toEndpoint(i.key_id, i));
}
