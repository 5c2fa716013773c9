import { tableName } from '../core/client.ts';
import { ENTITY } from '../core/table.ts';
import { keys } from '../keys.ts';
import type { TransactItem } from '../core/helpers.ts';
import type { StoreEvent } from '#domain/event/event.ts';

/**
 * The outbox item of an event, as one action of the change's own transaction: the change and its
 * event commit together or not at all (docs/webhooks.md, "Events"). The use case builds the event
 * (shared/domain/event); the repository that commits the change puts it. The stream consumer
 * numbers it.
 */
export function eventPut(event: StoreEvent): TransactItem {
  return {
    Put: {
      TableName: tableName(),
      Item: { ...keys.outboxEvent(event.store_id, event.event_id), type: ENTITY.outbox, ...event },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}
