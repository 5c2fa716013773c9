import { describe, expect, it } from 'vitest';
import { TABLE } from '#db/core/table.ts';
import { toOrder } from '#db/order/repo.ts';
import { toPage } from '#db/page/repo.ts';

/** The top-level attributes a mapper reads, recorded through a proxy item that answers anything. */
function attributesRead(mapper: (item: Record<string, unknown>) => unknown): string[] {
  const read = new Set<string>();
  const item = new Proxy({} as Record<string, unknown>, {
    get: (_t, p) => {
      if (typeof p === 'string') read.add(p);
      return p === 'items' ? [] : p === 'customer' ? {} : 'x';
    },
  });
  mapper(item);
  return [...read].sort();
}

describe('gsi1 projection', () => {
  // The orders-updated-since and pages-by-type queries map index items with these functions.
  it.each([
    ['toOrder', toOrder],
    ['toPage', toPage],
  ] as const)('holds every attribute %s reads', (_name, mapper) => {
    const missing = attributesRead(mapper as never).filter(
      (a) => !(TABLE.gsi1.projectedAttributes as readonly string[]).includes(a),
    );
    expect(missing).toEqual([]);
  });
});
