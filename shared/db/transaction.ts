import { cancellationReasons, itemFromError, type Item, type TransactItem } from './helpers.ts';

/**
 * A TransactWriteItems call's actions under names, in the order they are sent. DynamoDB answers a
 * cancelled transaction with one reason per action, by position; `cancelledBy` hands them back
 * by name, so no caller counts positions (`reasons.slice(3)`, `reasons[items.length - 1]`). A
 * name may stand for several actions (a page's slug moves, the caller's own writes) or none.
 */
export interface NamedTransaction<N extends string> {
  /** The actions, in order: `TransactItems` of the call. */
  items: TransactItem[];
  /** The reasons of a cancelled transaction by name; undefined when `err` is not a cancellation. */
  cancelledBy(err: unknown): Cancellation<N> | undefined;
}

export interface Cancellation<N extends string> {
  /** Whether an action of `name` failed its condition. */
  failed(name: N): boolean;
  /** Whether an action of `name` lost to a concurrent transaction (`TransactionConflict`). */
  conflicted(name: N): boolean;
  /**
   * The item the first failed action of `name` handed back (its `ReturnValuesOnConditionCheckFailure`),
   * unmarshalled; undefined when none failed or it asked for nothing.
   */
  item(name: N): Item | undefined;
}

type Part<N extends string> = readonly [name: N, actions: TransactItem | readonly TransactItem[] | undefined];

const CONDITION = 'ConditionalCheckFailed';

export function namedTransaction<N extends string>(parts: readonly Part<N>[]): NamedTransaction<N> {
  const items: TransactItem[] = [];
  const spans = new Map<N, readonly [number, number]>();
  for (const [name, actions] of parts) {
    if (spans.has(name)) throw new Error(`transaction part "${name}" is named twice`);
    const list = actions === undefined ? [] : Array.isArray(actions) ? actions : [actions as TransactItem];
    spans.set(name, [items.length, items.length + list.length]);
    items.push(...list);
  }
  return {
    items,
    cancelledBy(err) {
      const reasons = cancellationReasons(err);
      if (!reasons) return undefined;
      const of = (name: N) => {
        const [from, to] = spans.get(name) ?? [0, 0];
        return reasons.slice(from, to);
      };
      return {
        failed: (name) => of(name).some((r) => r.Code === CONDITION),
        conflicted: (name) => of(name).some((r) => r.Code === 'TransactionConflict'),
        item: (name) => itemFromError(of(name).find((r) => r.Code === CONDITION)?.Item),
      };
    },
  };
}
