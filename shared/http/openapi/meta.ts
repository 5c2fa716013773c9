/** The document's fixed parts: info, tags, the bearer scheme and the headers answers carry. */
import { GROUPS, type Group } from '../api-routes.ts';

export const INFO = {
  title: 'Store integration API',
  version: '1.0.0',
  summary: 'Catalog, orders and content of one store over HTTP/JSON, with scoped keys, signed webhooks and MCP.',
  description: [
    'Every request carries `Authorization: Bearer <key or token>`: an API key, or an OAuth access token a chat app got with the store admin’s approval (docs/oauth.md). Either belongs to one store and holds abilities (`x-required-ability` on each operation).',
    'Errors are `{code, message, field}`; docs/errors.md lists every code with its status. Every answer carries `X-Request-Id` (quote it when reporting a problem), and every answer past the key check the `RateLimit-*` headers; a 429 says when to retry in `Retry-After`. An answer replayed for a repeated Idempotency-Key carries `Idempotent-Replayed: true`.',
    "Order status changes (and the other events under `webhooks`) are POSTed to the key's webhook URL, signed with Standard Webhooks.",
    'HEAD works wherever GET does (the same headers, no body). A method a path does not have is answered 405 `method_not_allowed` with an `Allow` header listing the ones it has.',
  ].join('\n\n'),
  license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
};

const GROUP_DESCRIPTIONS: Record<Group, string> = {
  products: 'Read the catalog: products with their variants, by page or one by id.',
  catalog: 'Write products, categories and tags under your own external ids.',
  orders: 'Sync orders and move them through their statuses.',
  content: 'Pages and blog posts: save drafts, publish, unpublish.',
  mcp: 'The same operations as MCP tools for AI agents (docs/mcp.md).',
};

export const TAGS = [
  ...GROUPS.map((name) => ({ name, description: GROUP_DESCRIPTIONS[name] })),
  { name: 'meta', description: 'This document.' },
];

export const SECURITY_SCHEMES = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    description:
      'An API key issued by the store (admin CLI `keys create`), or an OAuth access token issued with the store admin’s approval (docs/oauth.md). Either is scoped to one store and a set of abilities.',
  },
};

const seconds = { type: 'integer', minimum: 0 };

export const COMPONENT_HEADERS = {
  'RateLimit-Limit': { description: 'Requests the key may make per window.', schema: seconds },
  'RateLimit-Remaining': { description: 'Requests left in the current window.', schema: seconds },
  'RateLimit-Reset': { description: 'Seconds until the window has room again.', schema: seconds },
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    required: true,
    schema: { type: 'integer', minimum: 1 },
  },
  'X-Request-Id': {
    description:
      'The id of this request, on every answer: the logs know it, and a 500 quotes it. Quote it when reporting a problem.',
    required: true,
    schema: { type: 'string' },
  },
  ETag: {
    description:
      "The version of what the answer shows, quoted: a product's `checksum`, a page's draft checksum. Send it back in `If-Match` to write only that version (docs/catalog-writes.md#conditional-writes).",
    schema: { type: 'string' },
  },
  'Idempotent-Replayed': {
    description:
      'Present (`true`) when this answer is the stored answer to an earlier request with the same Idempotency-Key: the same status and body, and nothing was changed this time.',
    schema: { type: 'string', enum: ['true'] },
  },
};
