/**
 * Key builders for the single table. Pure functions, unit-tested offline.
 *
 * Access patterns (pk / sk, or index):
 *  store by id .......................... STORE#{s}            / STORE
 *  id sequences of a store .............. STORE#{s}            / SEQ#{name}   (`value`; products: value = count, ids are dense 1..value)
 *  global key id sequence ............... GLOBAL               / SEQ#key
 *  key record by id (admin) ............. KEY#{k}              / KEY
 *  keys of a store (admin, fan-out) ..... gsi1: STORE#{s}#KEYS / KEY#{k:012}
 *  stores (admin `stores list`) ......... gsi1: STORES         / STORE#{s}   (on the store item; stores made before it have none)
 *  auth + rate limit (hot path) ......... TOKEN#{sha256}       / TOKEN        (one conditional UpdateItem)
 *  product by id ........................ STORE#{s}            / PRODUCT#{id:012}   (list page = BatchGet of ids (p-1)*l+1..p*l)
 *  filter[name] trigram postings ........ STORE#{s}#NAMEGRAM#{first code point of the trigram} / {trigram}#{id:012}   (`n`: the normalized name; no `type`: a search pays for every byte)
 *  names not yet in the postings ........ STORE#{s}#NAMEPENDING / PRODUCT#{id:012}   (written with the product; the name indexer removes it)
 *  the name the postings hold ........... STORE#{s}            / NAMEINDEXED#{id:012}   (the indexer's record, to remove trigrams a rename drops)
 *  products by exact SKU ................ STORE#{s}#SKU#{sku}  / PRODUCT#{id:012}
 *  external id → record id, per key ..... KEY#{k}              / XID#{kind}#{external_id}   (kind: product, page; each also holds a copy of its record, see product/item.ts, page/repo.ts)
 *  category / tag by external id ........ KEY#{k}              / CATEGORY#{external_id}, TAG#{external_id}
 *  order by id, ascending cursor ........ STORE#{s}            / ORDER#{id:012}
 *  order by reference ................... STORE#{s}            / ORDERREF#{reference}   (→ id, and a copy of the order)
 *  orders updated since ................. gsi1: STORE#{s}#ORDERS_BY_UPDATE / {updated_at ISO}#{id:012}
 *  page by id, ascending cursor ......... STORE#{s}            / PAGE#{id:012}
 *  pages of one type, ascending cursor .. gsi1: STORE#{s}#PAGES#{page|blog} / PAGE#{id:012}
 *  page slug uniqueness ................. STORE#{s}            / SLUG#{slug}   (→ id)
 *  idempotency record (24 h TTL) ........ KEY#{k}              / IDEMPOTENCY#{method} {path}#{idempotency-key}   (written once, finished, in the change's transaction)
 *  outbox event (stream → webhooks) ..... STORE#{s}            / EVENT#{event id}   (type = outbox, TTL 30 d; `sequence` once numbered)
 *  event log entry (GET /events) ........ STORE#{s}            / LOG#{sequence, 12 digits}   (type = event_log, TTL 30 d)
 *  webhook delivery log (30 d TTL) ...... KEY#{k}              / DELIVERY#{event id}
 *  webhook endpoint state (parking) ..... KEY#{k}              / WEBHOOK_ENDPOINT
 *  ordered delivery cursor (FIFO) ....... KEY#{k}              / ORDERED#{family}   (`through`: the group's events up to it are finished)
 *  redelivery request (stream → queue) . KEY#{k}              / REDELIVERY#{event id}#{round}   (type = outbox, TTL 1 d)
 *  event replay (stream → fan-out) ..... STORE#{s}            / EVENT#{event id}#REPLAY#{time}   (type = outbox, TTL 1 d)
 *  OAuth registered client (1 d TTL; 90 d once it got a token) .. OAUTH_CLIENT#{client_id} / CLIENT
 *  OAuth pending request (10 min TTL) .. OAUTH_REQUEST#{approval code} / REQUEST   (docs/oauth.md; the admin approves by code)
 *  OAuth requests, newest first ........ gsi1: OAUTH_REQUESTS / {expires_at ms:015}#{approval code}   (`oauth requests`; unexpired = sk above now)
 *  OAuth authorization code (60 s TTL) . OAUTH_CODE#{sha256}  / CODE   (`used` by its one exchange, then kept 30 d: a second one revokes the grant)
 *  OAuth refresh token (30 d TTL) ...... OAUTH_REFRESH#{sha256} / REFRESH   (`used` once rotated: a replay revokes the grant)
 *  OAuth rotated token's successor ..... OAUTH_REFRESH#{sha256} / SUCCESSOR   (the new pair, sealed; TTL: the 30 s grace window; read with REFRESH in one BatchGetItem)
 *  OAuth requests per caller, per window  OAUTH_LIMIT#{register|authorize}#{ip} or OAUTH_LIMIT#pending / WINDOW#{start ms:015}   (`count`, one conditional UpdateItem; TTL: the window's end)
 *  (an OAuth grant is a key item with kind = grant; its access token is the key's TOKEN item, with expires_at)
 *  (the local stack keeps items of its own under LOCAL#…: emulation/local/stream-position.ts, commit-barrier.ts, key-marker.ts)
 */

export type Key = { pk: string; sk: string };

const pad = (n: number, width = 12) => n.toString().padStart(width, '0');
const nameGramPartition = (storeId: string, text: string) => `STORE#${storeId}#NAMEGRAM#${[...text][0] ?? ''}`;
const namePendingPartition = (storeId: string) => `STORE#${storeId}#NAMEPENDING`;

export const keys = {
  store: (storeId: string): Key => ({ pk: `STORE#${storeId}`, sk: 'STORE' }),
  sequence: (storeId: string, name: 'product' | 'order' | 'page' | 'category' | 'tag' | 'event'): Key => ({
    pk: `STORE#${storeId}`,
    sk: `SEQ#${name}`,
  }),
  keySequence: (): Key => ({ pk: 'GLOBAL', sk: 'SEQ#key' }),
  key: (keyId: number): Key => ({ pk: `KEY#${keyId}`, sk: 'KEY' }),
  keysOfStoreIndex: (storeId: string) => ({ gsi1pk: `STORE#${storeId}#KEYS` }),
  storeIndexEntry: (storeId: string) => ({ gsi1pk: 'STORES', gsi1sk: `STORE#${storeId}` }),
  storesIndex: () => ({ gsi1pk: 'STORES' }),
  keyIndexEntry: (storeId: string, keyId: number) => ({ gsi1pk: `STORE#${storeId}#KEYS`, gsi1sk: `KEY#${pad(keyId)}` }),
  token: (tokenHash: string): Key => ({ pk: `TOKEN#${tokenHash}`, sk: 'TOKEN' }),
  /** A key's write-budget counters for the UTC hour that starts at `hourStartMs` (kept until its TTL). */
  writeBudget: (keyId: number, hourStartMs: number): Key => ({
    pk: `KEY#${keyId}`,
    sk: `BUDGET#${new Date(hourStartMs).toISOString().slice(0, 13)}`,
  }),
  product: (storeId: string, id: number): Key => ({ pk: `STORE#${storeId}`, sk: `PRODUCT#${pad(id)}` }),
  /** Postings of trigrams that start with the first code point of `text` (a trigram or a needle's prefix): one partition, so a one- or two-letter needle is one sort-key prefix. */
  nameGramPartition,
  nameGram: (storeId: string, gram: string, productId: number): Key => ({
    pk: nameGramPartition(storeId, gram),
    sk: `${gram}#${pad(productId)}`,
  }),
  /** The product a posting's sort key names (`oak#000000000042` → 42; a trigram may contain `#`). */
  nameGramProductId: (sk: string): number => Number(sk.slice(sk.lastIndexOf('#') + 1)),
  namePendingPartition,
  namePending: (storeId: string, productId: number): Key => ({
    pk: namePendingPartition(storeId),
    sk: `PRODUCT#${pad(productId)}`,
  }),
  nameIndexed: (storeId: string, productId: number): Key => ({
    pk: `STORE#${storeId}`,
    sk: `NAMEINDEXED#${pad(productId)}`,
  }),
  skuLink: (storeId: string, sku: string, productId: number): Key => ({
    pk: `STORE#${storeId}#SKU#${sku}`,
    sk: `PRODUCT#${pad(productId)}`,
  }),
  skuPartition: (storeId: string, sku: string) => `STORE#${storeId}#SKU#${sku}`,
  externalId: (keyId: number, kind: 'product' | 'page', externalId: string): Key => ({
    pk: `KEY#${keyId}`,
    sk: `XID#${kind}#${externalId}`,
  }),
  category: (keyId: number, externalId: string): Key => ({ pk: `KEY#${keyId}`, sk: `CATEGORY#${externalId}` }),
  tag: (keyId: number, externalId: string): Key => ({ pk: `KEY#${keyId}`, sk: `TAG#${externalId}` }),
  order: (storeId: string, id: number): Key => ({ pk: `STORE#${storeId}`, sk: `ORDER#${pad(id)}` }),
  orderPrefix: 'ORDER#',
  orderRef: (storeId: string, reference: string): Key => ({ pk: `STORE#${storeId}`, sk: `ORDERREF#${reference}` }),
  orderUpdateIndex: (storeId: string, updatedAt: string, id: number) => ({
    gsi1pk: `STORE#${storeId}#ORDERS_BY_UPDATE`,
    gsi1sk: `${updatedAt}#${pad(id)}`,
  }),
  orderUpdatePartition: (storeId: string) => `STORE#${storeId}#ORDERS_BY_UPDATE`,
  page: (storeId: string, id: number): Key => ({ pk: `STORE#${storeId}`, sk: `PAGE#${pad(id)}` }),
  pagePrefix: 'PAGE#',
  /** A page's entry in the index of its type (GET /content/pages?type=blog reads only those). */
  pageTypeIndex: (storeId: string, pageType: string, id: number) => ({
    gsi1pk: `STORE#${storeId}#PAGES#${pageType}`,
    gsi1sk: `PAGE#${pad(id)}`,
  }),
  slug: (storeId: string, slug: string): Key => ({ pk: `STORE#${storeId}`, sk: `SLUG#${slug}` }),
  idempotency: (keyId: number, method: string, path: string, idempotencyKey: string): Key => ({
    pk: `KEY#${keyId}`,
    sk: `IDEMPOTENCY#${method} ${path}#${idempotencyKey}`,
  }),
  outboxEvent: (storeId: string, eventId: string): Key => ({ pk: `STORE#${storeId}`, sk: `EVENT#${eventId}` }),
  /** The numbered copy of an event (`GET /events` reads these in sequence order). */
  eventLog: (storeId: string, sequence: number): Key => ({ pk: `STORE#${storeId}`, sk: `LOG#${pad(sequence)}` }),
  eventLogEnd: 'LOG#~',
  delivery: (keyId: number, eventId: string): Key => ({ pk: `KEY#${keyId}`, sk: `DELIVERY#${eventId}` }),
  deliveryPrefix: 'DELIVERY#',
  /** Whether the key's webhook URL is attempted or parked (docs/webhooks.md, "Parked endpoints"). */
  webhookEndpoint: (keyId: number): Key => ({ pk: `KEY#${keyId}`, sk: 'WEBHOOK_ENDPOINT' }),
  /** How far a FIFO destination's group (orders, catalog, content) is delivered (shared/app/ordered-delivery.ts). */
  orderedCursor: (keyId: number, family: string): Key => ({ pk: `KEY#${keyId}`, sk: `ORDERED#${family}` }),
  /** An admin's redelivery request: an outbox-typed item, so the stream carries it to the fan-out. */
  redeliveryRequest: (keyId: number, eventId: string, round: number): Key => ({
    pk: `KEY#${keyId}`,
    sk: `REDELIVERY#${eventId}#${round}`,
  }),
  /** An admin's replay of an event: a copy of the outbox item, so the stream carries it to the fan-out again. */
  outboxReplay: (storeId: string, eventId: string, stamp: string): Key => ({
    pk: `STORE#${storeId}`,
    sk: `EVENT#${eventId}#REPLAY#${stamp}`,
  }),
  oauthClient: (clientId: string): Key => ({ pk: `OAUTH_CLIENT#${clientId}`, sk: 'CLIENT' }),
  oauthRequest: (approvalCode: string): Key => ({ pk: `OAUTH_REQUEST#${approvalCode}`, sk: 'REQUEST' }),
  oauthRequestIndexEntry: (expiresAtMs: number, approvalCode: string) => ({
    gsi1pk: 'OAUTH_REQUESTS',
    gsi1sk: `${pad(expiresAtMs, 15)}#${approvalCode}`,
  }),
  /** The bounds of `oauthRequestIndexEntry`'s sort key for the requests still unexpired at `nowMs`. */
  oauthRequestsIndex: (nowMs: number) => ({ gsi1pk: 'OAUTH_REQUESTS', after: pad(nowMs, 15) }),
  oauthCode: (codeHash: string): Key => ({ pk: `OAUTH_CODE#${codeHash}`, sk: 'CODE' }),
  oauthRefresh: (tokenHash: string): Key => ({ pk: `OAUTH_REFRESH#${tokenHash}`, sk: 'REFRESH' }),
  /** Beside its refresh token, under the same partition key (the OAuth function's LeadingKeys). */
  oauthSuccessor: (tokenHash: string): Key => ({ pk: `OAUTH_REFRESH#${tokenHash}`, sk: 'SUCCESSOR' }),
  /** A count of OAuth requests in one window: `scope` names the endpoint and the caller (or `pending`: everyone's). */
  oauthLimit: (scope: string, windowStartMs: number): Key => ({
    pk: `OAUTH_LIMIT#${scope}`,
    sk: `WINDOW#${pad(windowStartMs, 15)}`,
  }),
  /** Sort key of a padded-id record back to its id (`PRODUCT#000000000042` → 42). */
  idOf: (sk: string): number => Number(sk.slice(sk.indexOf('#') + 1)),
  /** Sort key at which an ascending cursor query starts (exclusive of `id`). */
  afterId: (prefix: string, id: number) => `${prefix}${pad(id)}`,
};
