import { describe, expect, it } from 'vitest';
import {
  accepted,
  currentTaxonomy,
  moveUpdatedAt,
  newKey,
  putCategory,
  putTag,
  raisedEvents,
  storeWithCaller,
} from '#fixtures/usecase.ts';

/**
 * Categories and tags (shared/app/taxonomy.ts) called in-process: create, rename and the same text
 * again, each change with its event, and `updated_at` that only moves forward. The routes' bodies
 * and validation are test/integration/catalog-taxonomy.test.ts's; a write that keeps losing to
 * other writers is catalog-taxonomy-contention.test.ts's.
 */
const writer = () => storeWithCaller(['catalog:read', 'catalog:write']);

describe('putCategory and putTag', () => {
  it('creates, renames keeping id and created_at, and writes nothing for the same name; one event per change', async () => {
    const { caller } = await writer();
    const created = accepted(await putCategory(caller, 'chairs', 'Chairs'));
    expect(created).toMatchObject({ external_id: 'chairs', name: 'Chairs' });
    expect(await putCategory(caller, 'chairs', 'Chairs')).toEqual(created);
    const renamed = accepted(await putCategory(caller, 'chairs', 'Seating'));
    expect(renamed).toMatchObject({ id: created.id, name: 'Seating', created_at: created.created_at });
    expect(renamed.updated_at >= created.updated_at).toBe(true);
    // Another external id is another category, whatever its name.
    expect(accepted(await putCategory(caller, 'tables', 'Seating')).id).not.toBe(created.id);
    const events = await raisedEvents(caller.storeId, 'category.upserted');
    expect(events.map((e) => [e.payload.data.category.id, e.payload.data.category.name]).sort()).toEqual(
      [
        [created.id, 'Chairs'],
        [created.id, 'Seating'],
        [created.id + 1, 'Seating'],
      ].sort(),
    );
    expect(await currentTaxonomy('category', caller, 'chairs')).toMatchObject({ name: 'Seating' });
  });

  it('creates and changes a tag; another key of the store has tags of its own under the same external id', async () => {
    const { caller } = await writer();
    const tag = accepted(await putTag(caller, 'sale', 'sale'));
    expect(accepted(await putTag(caller, 'sale', 'clearance'))).toMatchObject({ id: tag.id, value: 'clearance' });
    const { caller: other } = await newKey(caller.storeId, ['catalog:write']);
    const theirs = accepted(await putTag(other, 'sale', 'sale'));
    expect(theirs.id).not.toBe(tag.id);
    expect(await currentTaxonomy('tag', caller, 'sale')).toMatchObject({ value: 'clearance' });
    expect(await raisedEvents(caller.storeId, 'tag.upserted')).toHaveLength(3);
  });

  it('never moves updated_at back, even when the stored one is ahead of this clock', async () => {
    const { caller } = await writer();
    accepted(await putCategory(caller, 'ahead', 'Ahead'));
    // Another writer whose clock runs far ahead left this timestamp.
    await moveUpdatedAt({ kind: 'category', keyId: caller.keyId, externalId: 'ahead' }, '2099-01-01T00:00:00.000Z');
    expect(await putCategory(caller, 'ahead', 'Renamed')).toMatchObject({
      name: 'Renamed',
      updated_at: '2099-01-01T00:00:00.001Z',
    });
  });
});
