import { describe, expect, it } from 'vitest';
import { eventView, type EventPayload } from '#domain/event/event.ts';

const page = { id: 7, external_id: 'cms:7', title: 'About' };
const logged = (data: Record<string, unknown>, owner: { owner_key_id: number | null; external_id: string | null }) => ({
  event_id: 'evt_1',
  sequence: 3,
  payload: { type: 'page.published', timestamp: '2026-11-25T00:00:00.000Z', data } as unknown as EventPayload,
  origin: null,
  ...owner,
});

describe('an event as a key sees it: external ids are their owner key alone', () => {
  it('shows the owning key its external id and every other key none', () => {
    const e = logged({ page: { ...page, external_id: null } }, { owner_key_id: 4, external_id: 'cms:7' });
    expect(eventView(e, 4).data).toEqual({ page: { ...page, external_id: 'cms:7' } });
    expect(eventView(e, 5).data).toEqual({ page: { ...page, external_id: null } });
  });

  it('hides an external id that a payload logged before the owner rode beside it still holds', () => {
    const old = logged(
      { page },
      { owner_key_id: undefined as unknown as null, external_id: undefined as unknown as null },
    );
    expect(eventView(old, 4).data).toEqual({ page: { ...page, external_id: null } });
  });

  it('adds nothing to a payload without an external id field for other keys', () => {
    const product = { id: 1, name: 'Oak' };
    const e = logged({ product }, { owner_key_id: 4, external_id: 'p1' });
    expect(eventView(e, 5).data).toEqual({ product });
    expect(eventView(e, 4).data).toEqual({ product: { ...product, external_id: 'p1' } });
  });
});
