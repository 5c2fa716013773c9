import * as iam from 'aws-cdk-lib/aws-iam';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { TABLE } from '#db/core/table.ts';
import { keys } from '#db/keys.ts';

export type TableAction =
  | 'GetItem'
  | 'BatchGetItem'
  | 'Query'
  | 'PutItem'
  | 'UpdateItem'
  | 'DeleteItem'
  | 'BatchWriteItem'
  | 'ConditionCheckItem';

export interface TableAccess {
  /** Item actions on the table; TransactWriteItems is authorized per item (Put/Update/Delete). */
  actions: TableAction[];
  /** Queries gsi1 (keys of a store, orders updated since, pages of a type). */
  queriesIndex?: boolean;
  /** Partition-key patterns the function may touch (dynamodb:LeadingKeys). */
  leadingKeys?: string[];
}

const writes: TableAction[] = ['PutItem', 'UpdateItem', 'DeleteItem'];

/**
 * The table actions of each function, read off what its bundle sends (test/infra/table-access.test.ts
 * bundles every handler and fails when this table and the code disagree). No function scans.
 */
export const TABLE_ACCESS = {
  // One GetItem / conditional UpdateItem on the token item, and nothing else.
  authorizer: { actions: ['GetItem', 'UpdateItem'], leadingKeys: [keys.token('*').pk] },
  // UpdateItem: the list settles an expired id reservation a stopped writer left open (one closing
  // write on the store's id sequence, docs/catalog-writes.md "Ids under contention").
  products: { actions: ['GetItem', 'BatchGetItem', 'Query', 'UpdateItem'] },
  // Query: the key's external-id links, for GET /catalog/products/checksums.
  catalog: { actions: ['GetItem', 'BatchGetItem', 'Query', ...writes] },
  // No DeleteItem: an idempotency record is written finished inside the commit, never claimed and released.
  orders: { actions: ['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'UpdateItem'], queriesIndex: true },
  content: { actions: ['GetItem', 'BatchGetItem', 'Query', ...writes], queriesIndex: true },
  mcp: { actions: ['GetItem', 'BatchGetItem', 'Query', ...writes], queriesIndex: true },
  // The OAuth endpoints (docs/oauth.md): their own items, and a grant's key and token items (written when the page
  // redeems an approval; code exchange, refresh, reuse revocation). BatchGetItem: a refresh token with its successor.
  oauth: {
    actions: ['GetItem', 'BatchGetItem', ...writes],
    leadingKeys: [
      keys.oauthClient('*').pk,
      keys.oauthRequest('*').pk,
      keys.oauthCode('*').pk,
      keys.oauthRefresh('*').pk,
      keys.oauthLimit('*', 0).pk,
      keys.key(0).pk.replace('0', '*'),
      keys.token('*').pk,
      keys.store('*').pk,
    ],
  },
  // ConditionCheckItem: `products reindex-names` marks a name pending only if its product is unchanged.
  admin: { actions: ['GetItem', 'BatchGetItem', 'Query', ...writes, 'ConditionCheckItem'], queriesIndex: true },
  events: { actions: ['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'UpdateItem'], queriesIndex: true },
  // Query: a resumed endpoint drains its parked deliveries oldest first (KEY#k / DELIVERY#…, the table itself).
  // An ordered (FIFO) destination's run (shared/app/ordered-delivery.ts): Query of the store's event log,
  // BatchGetItem of a page's deliveries, PutItem of a delivery it reaches before the fan-out.
  webhooks: { actions: ['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'UpdateItem'] },
  deadLetter: { actions: ['GetItem', 'UpdateItem'] },
  // Reads pending names with their indexed records, writes postings 25 at a time, removes the pending entry (conditional).
  nameIndex: { actions: ['BatchGetItem', 'BatchWriteItem', 'DeleteItem'] },
} satisfies Record<string, TableAccess>;

export type TableUser = keyof typeof TABLE_ACCESS;

/** Grants exactly `access` on the table (and Query on gsi1 alone, never `index/*`). */
export function grantTableAccess(grantee: iam.IGrantable, table: dynamodb.ITable, access: TableAccess): void {
  const conditions = access.leadingKeys
    ? { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': access.leadingKeys } }
    : undefined;
  grantee.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: access.actions.map((a) => `dynamodb:${a}`),
      resources: [table.tableArn],
      conditions,
    }),
  );
  if (access.queriesIndex) {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: [`${table.tableArn}/index/${TABLE.gsi1.indexName}`],
      }),
    );
  }
}
