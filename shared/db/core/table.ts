/**
 * The single table: every attribute and index name lives here. The CDK stack, the local
 * bootstrap and the tests import this module, so the three cannot drift apart.
 */
export const TABLE = {
  partitionKey: 'pk',
  sortKey: 'sk',
  gsi1: {
    indexName: 'gsi1',
    partitionKey: 'gsi1pk',
    sortKey: 'gsi1sk',
    /**
     * What the gsi1 queries read (key.repo listKeysOfStore, order.repo listOrdersUpdatedSince,
     * page.repo listPagesAfter by type, store.repo listStores), and nothing else: webhook secrets
     * and bookkeeping stay out of the index. A read of another attribute through gsi1 comes back
     * undefined, locally too.
     * Changing a projection replaces the index (DynamoDB rebuilds it; queries on it fail meanwhile).
     */
    projectedAttributes: [
      // keys of a store
      'id',
      'store_id',
      'name',
      'abilities',
      'status',
      'webhook_url',
      'events',
      'created_at',
      'revoked_at',
      'token_hash',
      // orders updated since (currency_code: the stores list too)
      'reference',
      'currency_code',
      'customer',
      'items',
      'subtotal',
      'shipping_total',
      'discount_total',
      'total',
      'paid_total',
      'updated_at',
      // pages of one type
      'external_id',
      'owner_key_id',
      'page_type',
      'title',
      'slug',
      'body',
      'published_at',
      'draft',
    ],
  },
  typeAttribute: 'type',
  ttlAttribute: 'ttl',
} as const;

/** Values of the `type` attribute; the stream filter selects on OUTBOX. */
export const ENTITY = {
  store: 'store',
  key: 'key',
  token: 'token',
  sequence: 'sequence',
  product: 'product',
  namePending: 'name_pending',
  nameIndexed: 'name_indexed',
  skuLink: 'sku_link',
  externalId: 'external_id',
  category: 'category',
  tag: 'tag',
  order: 'order',
  orderRef: 'order_ref',
  page: 'page',
  slug: 'slug',
  idempotency: 'idempotency',
  outbox: 'outbox',
  eventLog: 'event_log',
  delivery: 'delivery',
  webhookEndpoint: 'webhook_endpoint',
  orderedCursor: 'ordered_cursor',
  oauthClient: 'oauth_client',
  oauthRequest: 'oauth_request',
  oauthCode: 'oauth_code',
  oauthRefresh: 'oauth_refresh',
  oauthSuccessor: 'oauth_successor',
  oauthLimit: 'oauth_limit',
} as const;
