import { describe, expect, it } from 'vitest';
import { namedTransaction } from '#db/core/helpers.ts';

const put = (sk: string) => ({ Put: { TableName: 't', Item: { pk: 'p', sk } } });

/** What the SDK throws for a cancelled TransactWriteItems: one reason per action, by position. */
function cancelled(reasons: { Code: string; Item?: Record<string, unknown> }[]) {
  return Object.assign(new Error('cancelled'), { name: 'TransactionCanceledException', CancellationReasons: reasons });
}

describe('namedTransaction', () => {
  const tx = namedTransaction([
    ['order', put('o')],
    ['none', undefined],
    ['moves', [put('m1'), put('m2')]],
    ['own', []],
    ['event', put('e')],
  ]);

  it('sends the actions in the order named, a part of none leaving no gap', () => {
    expect(tx.items.map((i) => i.Put?.Item?.sk)).toEqual(['o', 'm1', 'm2', 'e']);
  });

  it("answers each part's reasons by name, whatever its position", () => {
    const c = tx.cancelledBy(
      cancelled([
        { Code: 'None' },
        { Code: 'None' },
        { Code: 'ConditionalCheckFailed', Item: { page_id: { N: '7' } } },
        { Code: 'TransactionConflict' },
      ]),
    )!;
    expect(c.failed('moves')).toBe(true);
    expect(c.item('moves')).toEqual({ page_id: 7 });
    expect(c.failed('order')).toBe(false);
    expect(c.item('order')).toBeUndefined();
    expect(c.conflicted('event')).toBe(true);
    expect(c.failed('none') || c.failed('own') || c.conflicted('own')).toBe(false);
  });

  it('is no cancellation for any other error', () => {
    expect(tx.cancelledBy(new Error('boom'))).toBeUndefined();
    expect(tx.cancelledBy(Object.assign(new Error('x'), { name: 'ConditionalCheckFailedException' }))).toBeUndefined();
  });

  it('refuses a name given twice', () => {
    expect(() =>
      namedTransaction([
        ['a', put('1')],
        ['a', put('2')],
      ]),
    ).toThrow(/named twice/);
  });
});
