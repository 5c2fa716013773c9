import { describe, expect, it } from 'vitest';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { createStore } from '#fixtures/api.ts';
import { storedOutboxItem } from '#fixtures/stream-records.ts';
import { readEventLog } from '#db/event/log.repo.ts';
import { assignSequences } from '#app/fan-out.ts';
import { db, tableName } from '#db/core/client.ts';
import { keys } from '#db/keys.ts';

/**
 * A reader at the head of the log (`GET /events?cursor=<last>` while events flow) must never be
 * told its cursor expired because the stream consumer numbered events between the reader's Query
 * and its read of the counter. The interleaving is made certain here: a middleware numbers the
 * next event right after the reader's Query came back (the real repository, DynamoDB Local).
 */
const now = () => Math.floor(Date.now() / 1000);

async function storeWithEvents(count: number) {
  const storeId = await createStore();
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await storedOutboxItem(storeId)).event_id);
  return { storeId, ids };
}

describe('the event log read at its head', () => {
  it('does not take events numbered between its Query and its counter read for expired ones', async () => {
    const { storeId, ids } = await storeWithEvents(2);
    await assignSequences(storeId, [ids[0]!]);
    let armed = true;
    const client = db();
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        if (armed && context.commandName === 'QueryCommand') {
          armed = false;
          await assignSequences(storeId, [ids[1]!]);
        }
        return out;
      },
      { step: 'initialize', name: 'numberAfterTheQuery' },
    );
    try {
      const page = await readEventLog(storeId, 1, 50, now());
      expect(armed).toBe(false);
      expect(page.expired).toBe(false);
      expect(page.events.map((e) => e.sequence)).toEqual([2]);
    } finally {
      client.middlewareStack.remove('numberAfterTheQuery');
    }
  });

  it('still reports a cursor whose next events are gone, with and without later ones', async () => {
    const { storeId, ids } = await storeWithEvents(3);
    await assignSequences(storeId, ids);
    const drop = (sequence: number) =>
      db().send(new DeleteCommand({ TableName: tableName(), Key: keys.eventLog(storeId, sequence) }));
    await drop(2);
    expect(await readEventLog(storeId, 1, 50, now())).toMatchObject({ expired: true });
    await drop(3);
    expect(await readEventLog(storeId, 1, 50, now())).toMatchObject({ expired: true, events: [] });
    expect(await readEventLog(storeId, 3, 50, now())).toMatchObject({ expired: false, events: [] });
  });
});
