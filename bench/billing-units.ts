/**
 * DynamoDB read and write request units by AWS's billing rules, counted per call by a middleware
 * the cost bench adds to the stack's client. DynamoDB Local's own ConsumedCapacity is not used:
 * it reports nothing for a read that finds nothing or a failed condition, and a flat figure for
 * a transaction, where AWS charges by size. The rules
 * (docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html):
 * - a read: 1 RRU per 4 KB (rounded up, at least one), half for an eventually consistent read,
 *   twice in a transaction; a Query or Scan rounds up the sum of the items it read, a BatchGetItem
 *   each item; an index query is always eventually consistent, sized by the projected item;
 * - a write: 1 WRU per KB of the larger of the item before and after, at least one, twice in a
 *   transaction (ConditionCheck included); a failed condition is charged as if it had written.
 * The item sizes before and after a write come from GetItems the meter makes itself, outside the
 * request's counts (a bench cost, never the product's).
 */
import { GetItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { contextOfCall } from '#db/core/client.ts';
import { TABLE } from '#db/core/table.ts';

type Av = AttributeValue & Record<string, unknown>;
type Item = Record<string, AttributeValue>;

function valueSize(v: Av): number {
  if (v.S !== undefined) return Buffer.byteLength(v.S as string);
  if (v.N !== undefined)
    return (
      Math.ceil(
        String(v.N)
          .replace(/^-|\.|e.*$/gi, '')
          .replace(/^0+/, '').length / 2,
      ) + 1
    );
  if (v.B !== undefined) return (v.B as Uint8Array).length;
  if (v.BOOL !== undefined || v.NULL !== undefined) return 1;
  if (v.SS) return (v.SS as string[]).reduce((a, s) => a + Buffer.byteLength(s), 0);
  if (v.NS) return (v.NS as string[]).reduce((a, n) => a + valueSize({ N: n } as Av), 0);
  if (v.BS) return (v.BS as Uint8Array[]).reduce((a, b) => a + b.length, 0);
  if (v.L) return 3 + (v.L as Av[]).reduce((a, e) => a + 1 + valueSize(e), 0);
  if (v.M)
    return (
      3 +
      Object.entries(v.M as Record<string, Av>).reduce((a, [k, e]) => a + 1 + Buffer.byteLength(k) + valueSize(e), 0)
    );
  return 0;
}

const AV_TYPES = new Set(['S', 'N', 'B', 'BOOL', 'NULL', 'L', 'M', 'SS', 'NS', 'BS']);
const isAttributeValue = (v: unknown) =>
  v !== null &&
  typeof v === 'object' &&
  !(v instanceof Uint8Array) &&
  Object.keys(v).length === 1 &&
  AV_TYPES.has(Object.keys(v)[0]!);

/** The same for a value the document client has not marshalled (yet) or already unmarshalled. */
function nativeSize(v: unknown): number {
  if (v === null || v === undefined || typeof v === 'boolean') return 1;
  if (typeof v === 'string') return Buffer.byteLength(v);
  if (typeof v === 'number' || typeof v === 'bigint') return valueSize({ N: String(v) } as Av);
  if (v instanceof Uint8Array) return v.length;
  if (v instanceof Set) return [...v].reduce((a: number, e) => a + nativeSize(e), 0);
  if (Array.isArray(v)) return 3 + v.reduce((a: number, e) => a + 1 + nativeSize(e), 0);
  if (typeof v === 'object' && 'value' in v && Object.keys(v).length === 1)
    return nativeSize(String((v as { value: unknown }).value));
  return (
    3 +
    Object.entries(v as Record<string, unknown>).reduce((a, [k, e]) => a + 1 + Buffer.byteLength(k) + nativeSize(e), 0)
  );
}

/** An item's size as DynamoDB bills it: every attribute's name and value. */
export function itemSize(item: Record<string, unknown> | undefined): number {
  if (!item) return 0;
  const marshalled = Object.values(item).every(isAttributeValue);
  return Object.entries(item).reduce(
    (a, [k, v]) => a + Buffer.byteLength(k) + (marshalled ? valueSize(v as Av) : nativeSize(v)),
    0,
  );
}

const readUnits = (bytes: number, consistent: boolean) => Math.max(1, Math.ceil(bytes / 4096)) * (consistent ? 1 : 0.5);
const writeUnits = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));

export interface Billed {
  rru: number;
  wru: number;
  /** Time the meter's own GetItems took inside the request, for the bench to take off its duration. */
  meterMs: number;
}

type WriteAction = { table: string; key: Item; put?: Item };

function keyOf(item: Item): Item {
  return { [TABLE.partitionKey]: item[TABLE.partitionKey]!, [TABLE.sortKey]: item[TABLE.sortKey]! };
}

function writeActions(command: string, input: Record<string, any>): { actions: WriteAction[]; factor: number } {
  if (command === 'PutItem')
    return { actions: [{ table: input.TableName, key: keyOf(input.Item), put: input.Item }], factor: 1 };
  if (command === 'UpdateItem' || command === 'DeleteItem')
    return { actions: [{ table: input.TableName, key: input.Key }], factor: 1 };
  if (command === 'TransactWriteItems') {
    const actions = (input.TransactItems as Record<string, any>[]).map((t) => {
      const a = t.Put ?? t.Update ?? t.Delete ?? t.ConditionCheck;
      return { table: a.TableName, key: t.Put ? keyOf(t.Put.Item) : a.Key, put: t.Put?.Item };
    });
    return { actions, factor: 2 };
  }
  if (command === 'BatchWriteItem') {
    const actions = Object.entries(input.RequestItems as Record<string, any[]>).flatMap(([table, reqs]) =>
      reqs.map((r) => ({
        table,
        key: r.PutRequest ? keyOf(r.PutRequest.Item) : r.DeleteRequest.Key,
        put: r.PutRequest?.Item,
      })),
    );
    return { actions, factor: 1 };
  }
  return { actions: [], factor: 1 };
}

function readUnitsOf(
  command: string,
  input: Record<string, any>,
  output: Record<string, any>,
  reported: number,
): number {
  switch (command) {
    case 'GetItem':
      return readUnits(itemSize(output.Item), input.ConsistentRead === true);
    case 'BatchGetItem':
      return Object.entries(input.RequestItems as Record<string, { Keys: Item[]; ConsistentRead?: boolean }>).reduce(
        (sum, [table, req]) => {
          const found = (output.Responses?.[table] ?? []) as Item[];
          const missing = Math.max(0, req.Keys.length - found.length);
          return (
            sum +
            found.reduce((a, item) => a + readUnits(itemSize(item), req.ConsistentRead === true), 0) +
            missing * readUnits(0, req.ConsistentRead === true)
          );
        },
        0,
      );
    case 'Query':
    case 'Scan': {
      const consistent = input.ConsistentRead === true && !input.IndexName;
      // A projection or filter hides part of what was read: DynamoDB Local's figure is by what it read.
      if (input.ProjectionExpression || input.FilterExpression) return Math.max(reported, readUnits(0, consistent));
      return readUnits(
        ((output.Items ?? []) as Item[]).reduce((a, item) => a + itemSize(item), 0),
        consistent,
      );
    }
    case 'TransactGetItems':
      return ((output.Responses ?? []) as { Item?: Item }[]).reduce(
        (a, r) => a + 2 * readUnits(itemSize(r.Item), true),
        0,
      );
    default:
      return 0;
  }
}

/** BENCH_WRU_DETAIL=1: each write action's sort key, billed size and units on stderr (what a write's WRU are made of). */
const WRU_DETAIL = process.env.BENCH_WRU_DETAIL === '1';
const skOf = (key: Item) => {
  const sk = key[TABLE.sortKey] as { S?: string } | string;
  return typeof sk === 'string' ? sk : sk.S;
};

/**
 * Adds the meter to `client`; `sink` receives each counted call's units with the request id of
 * the request context the call was sent with (shared/db/core/client.ts `contextOfCall`), so the
 * bench keeps its requests' calls apart from the stack's pollers and indexers, which are not
 * requests. Calls sent without a request id are not metered.
 */
export function meterBillingUnits(
  client: DynamoDBClient,
  sink: (billed: Billed, command: string, requestId: string) => void,
): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const requestId = contextOfCall(context)?.log.request_id;
      if (!requestId) return next(args);
      const command = (context.commandName ?? '').replace(/Command$/, '');
      const input = args.input as Record<string, any>;
      const { actions, factor } = writeActions(command, input);
      let meterMs = 0;
      const sizesNow = async () => {
        const started = performance.now();
        const items = await Promise.all(
          // Sent on the client itself: no request context, so neither counted nor metered.
          actions.map((a) => client.send(new GetItemCommand({ TableName: a.table, Key: a.key, ConsistentRead: true }))),
        );
        meterMs += performance.now() - started;
        return items.map((out) => itemSize(out.Item));
      };
      const before = actions.length ? await sizesNow() : [];
      const bill = async (failed: boolean) => {
        const after = failed ? actions.map((a) => itemSize(a.put)) : actions.length ? await sizesNow() : [];
        const sizes = actions.map((a, i) => Math.max(before[i]!, after[i]!, itemSize(a.put)));
        if (WRU_DETAIL)
          for (const [i, a] of actions.entries())
            process.stderr.write(
              `bench: wru: ${command} ${skOf(a.key)} ${sizes[i]} B -> ${factor * writeUnits(sizes[i]!)}\n`,
            );
        return actions.reduce((sum, _a, i) => sum + factor * writeUnits(sizes[i]!), 0);
      };
      try {
        const out = await next(args);
        const output = out.output as Record<string, any>;
        const reported = [output.ConsumedCapacity ?? []]
          .flat()
          .reduce(
            (a: number, c: { ReadCapacityUnits?: number; CapacityUnits?: number }) =>
              a + (c.ReadCapacityUnits ?? c.CapacityUnits ?? 0),
            0,
          );
        const wru = await bill(false);
        sink({ rru: readUnitsOf(command, input, output, reported), wru, meterMs }, command, requestId);
        return out;
      } catch (err) {
        if (actions.length) sink({ rru: 0, wru: await bill(true), meterMs }, command, requestId);
        throw err;
      }
    },
    { step: 'build', name: 'meterBillingUnits' },
  );
}
