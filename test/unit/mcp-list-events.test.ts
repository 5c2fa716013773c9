import { describe, expect, it } from 'vitest';
import { TOOLS } from '#functions/mcp/tools.ts';
import { bounded } from '#functions/mcp/paging.ts';

const tool = TOOLS.find((t) => t.name === 'list_events')!;

describe('MCP list_events', () => {
  it('turns its arguments into the query of GET /events', () => {
    expect(tool.toRequest({})).toEqual({ query: { limit: '50', exclude_own: 'false' } });
    expect(
      tool.toRequest({ cursor: 41, limit: 10, types: ['order.paid', 'product.updated'], exclude_own: true }),
    ).toEqual({ query: { cursor: '41', limit: '10', types: 'order.paid,product.updated', exclude_own: 'true' } });
  });

  it('shortens a page past the bound to the events that fit and continues after the last one by sequence', () => {
    const event = (sequence: number) => ({
      id: `evt_${String(sequence).padStart(32, '0')}`,
      sequence,
      type: 'product.updated',
      timestamp: '2026-01-01T00:00:00.000Z',
      origin: null,
      data: { product: { name: 'x'.repeat(1000) } },
    });
    const doc = { data: [event(7), event(9), event(12)], next_cursor: null };
    const answer = bounded('list_events', 'EventList', doc, { limit: 3 }, 2500);
    expect((answer.data as { sequence: number }[]).map((e) => e.sequence)).toEqual([7, 9]);
    expect(answer.next_cursor).toBe(9);
    expect(answer.more_available).toEqual({ reason: 'size', tool: 'list_events', arguments: { limit: 3, cursor: 9 } });
  });
});
