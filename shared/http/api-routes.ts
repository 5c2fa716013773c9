import type { Ability } from '#domain/key/abilities.ts';
import type { Principal } from '#domain/principal.ts';
import type { RateDecision } from '#domain/key/api-key.ts';

/** Where the API's endpoints live under the stage; every route's path is relative to it. */
export const API_BASE_PATH = '/api/v1/integrations';

export const GROUPS = ['products', 'catalog', 'orders', 'content', 'mcp'] as const;
export type Group = (typeof GROUPS)[number];

export interface ApiRoute {
  group: Group;
  operation: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH';
  path: string;
  /** null: any valid key may call it (the MCP endpoint checks each tool's ability itself). */
  ability: Ability | null;
  /** With `ability: null`: the key must hold at least one of these (what it then sees depends on which). */
  anyOf?: readonly Ability[];
}

/**
 * Every endpoint once: the CDK stack builds API Gateway resources from it, the local server
 * routes with it, the authorizer and the handlers check the ability from it. Paths are relative
 * to API_BASE_PATH.
 */
export const API_ROUTES = [
  { group: 'products', operation: 'listProducts', method: 'GET', path: '/products', ability: 'catalog:read' },
  { group: 'products', operation: 'getProduct', method: 'GET', path: '/products/{id}', ability: 'catalog:read' },
  { group: 'orders', operation: 'listOrders', method: 'GET', path: '/orders', ability: 'orders:read' },
  // The store's event log: any of the three read abilities; each key sees only the families it can read.
  {
    group: 'orders',
    operation: 'listEvents',
    method: 'GET',
    path: '/events',
    ability: null,
    anyOf: ['orders:read', 'catalog:read', 'content:read'],
  },
  {
    group: 'orders',
    operation: 'setOrderStatus',
    method: 'POST',
    path: '/orders/{reference}/status',
    ability: 'orders:write-status',
  },
  {
    group: 'catalog',
    operation: 'listChecksums',
    method: 'GET',
    path: '/catalog/products/checksums',
    ability: 'catalog:read',
  },
  {
    group: 'catalog',
    operation: 'getCatalogProduct',
    method: 'GET',
    path: '/catalog/products/{external_id}',
    ability: 'catalog:read',
  },
  {
    group: 'catalog',
    operation: 'upsertProduct',
    method: 'PUT',
    path: '/catalog/products/{external_id}',
    ability: 'catalog:write',
  },
  {
    group: 'catalog',
    operation: 'updateProduct',
    method: 'PATCH',
    path: '/catalog/products/{external_id}',
    ability: 'catalog:write',
  },
  {
    group: 'catalog',
    operation: 'upsertProducts',
    method: 'POST',
    path: '/catalog/products/batch',
    ability: 'catalog:write',
  },
  {
    group: 'catalog',
    operation: 'adjustProductStock',
    method: 'POST',
    path: '/catalog/products/{external_id}/stock',
    ability: 'catalog:write',
  },
  {
    group: 'catalog',
    operation: 'upsertCategory',
    method: 'PUT',
    path: '/catalog/categories/{external_id}',
    ability: 'catalog:write',
  },
  {
    group: 'catalog',
    operation: 'upsertTag',
    method: 'PUT',
    path: '/catalog/tags/{external_id}',
    ability: 'catalog:write',
  },
  { group: 'content', operation: 'listPages', method: 'GET', path: '/content/pages', ability: 'content:read' },
  {
    group: 'content',
    operation: 'savePage',
    method: 'PUT',
    path: '/content/pages/{external_id}',
    ability: 'content:write',
  },
  {
    group: 'content',
    operation: 'publishPage',
    method: 'POST',
    path: '/content/pages/{external_id}/publish',
    ability: 'content:write',
  },
  {
    group: 'content',
    operation: 'unpublishPage',
    method: 'POST',
    path: '/content/pages/{external_id}/unpublish',
    ability: 'content:write',
  },
  // MCP (Streamable HTTP, stateless): POST carries JSON-RPC. GET would open an SSE stream and
  // DELETE end a session, neither of which a stateless server has: both are 405 (Allow: POST), as
  // the transport spec asks, like any other method a known path does not have.
  { group: 'mcp', operation: 'mcp', method: 'POST', path: '/mcp', ability: null },
] as const satisfies readonly ApiRoute[];

type RouteEntry = (typeof API_ROUTES)[number];

/** Every operation of the API, by name: a union the group handlers and the MCP tool table are exhaustive over. */
export type Operation = RouteEntry['operation'];
/** The operations one group's Lambda serves. */
export type OperationOf<G extends Group> = Extract<RouteEntry, { group: G }>['operation'];
/** The operations an API key's ability gates one by one: each is also an MCP tool. */
export type KeyedOperation = Extract<RouteEntry, { ability: string }>['operation'];
/** One group's writes: its keyed operations that are not a GET (each can be dry run). */
export type WriteOperationOf<G extends Group> = Extract<
  RouteEntry,
  { group: G; ability: string; method: 'POST' | 'PUT' | 'PATCH' }
>['operation'];

/** Whether a route writes: a keyed operation that is not a GET. Each write can be dry run and spends the key's write budget. */
export const isWriteRoute = (route: Pick<ApiRoute, 'method' | 'ability'>): boolean =>
  route.method !== 'GET' && route.ability !== null;

/** Every group has one Lambda (the CDK stack and the local server create one per group). */
export function groups(): Group[] {
  return [...GROUPS];
}

/** API Gateway's `resource` for a route: the full template including the base path. */
export const resourceOf = (route: Pick<ApiRoute, 'path'>) => API_BASE_PATH + route.path;

/** HEAD is served wherever GET is, by the GET route (the answer without its body). */
const routeMethod = (method: string) => (method === 'HEAD' ? 'GET' : method);

export function findRoute(method: string, resource: string): ApiRoute | undefined {
  return (API_ROUTES as readonly ApiRoute[]).find(
    (r) => r.method === routeMethod(method) && resourceOf(r) === resource,
  );
}

/** The methods a resource has (`Allow` of a 405), HEAD beside GET; empty for an unknown resource. */
export function allowedMethods(resource: string): string[] {
  const methods = (API_ROUTES as readonly ApiRoute[])
    .filter((r) => resourceOf(r) === resource)
    .map((r) => r.method as string);
  if (methods.includes('GET')) methods.push('HEAD');
  return [...new Set(methods)].sort();
}

/** Every resource of the API once, with the group whose Lambda answers its unknown methods (405). */
export function resources(): { resource: string; group: Group }[] {
  const seen = new Map<string, Group>();
  for (const r of API_ROUTES as readonly ApiRoute[]) if (!seen.has(resourceOf(r))) seen.set(resourceOf(r), r.group);
  return [...seen].map(([resource, group]) => ({ resource, group }));
}

/**
 * The path of a request in one spelling, whatever the client's percent-encoding: the route's
 * template with the decoded parameters. The idempotency scope uses it, so `/orders/ORD%3A1/status`
 * and `/orders/ORD:1/status` (and the MCP tool) are one scope. API Gateway REST may pass path
 * parameters still encoded, the local gateway decodes them: decode once more where possible.
 */
export function canonicalPath(
  route: Pick<ApiRoute, 'path'>,
  pathParameters: Record<string, string | undefined>,
): string {
  return resourceOf(route).replace(/\{(\w+)\}/g, (_m, name: string) => {
    const value = pathParameters[name] ?? '';
    try {
      return value.includes('%') ? decodeURIComponent(value) : value;
    } catch {
      return value;
    }
  });
}

/**
 * The authorizer → handler hand-over. API Gateway passes the authorizer's `context` as flat
 * string/number/boolean values, so abilities travel comma-joined and everything is re-parsed.
 */
export interface RequestPrincipal extends Principal {
  rate: { limit: number; remaining: number; resetSeconds: number; limited: boolean; contended: boolean };
}

export function principalToContext(principal: Principal, rate: RateDecision, missingAbility: string | null) {
  return {
    keyId: String(principal.keyId),
    storeId: principal.storeId,
    abilities: principal.abilities.join(','),
    currency: principal.currency ?? '',
    mcp: principal.mcpReadOnly ? 'read-only' : '',
    writesPerHour: String(principal.budget?.writes ?? ''),
    statusChangesPerHour: String(principal.budget?.statusChanges ?? ''),
    rateLimit: String(rate.limit),
    rateRemaining: String(rate.remaining),
    rateReset: String(rate.resetSeconds),
    rateLimited: rate.allowed ? '0' : '1',
    rateContended: rate.contended ? '1' : '0',
    // A flag for the handler, which answers the 403 itself (a gateway response cannot carry RateLimit-*).
    missingAbility: missingAbility ?? '',
  };
}

export function principalFromContext(
  context: Record<string, unknown> | null | undefined,
): RequestPrincipal | undefined {
  if (!context || context.keyId === undefined || context.storeId === undefined) return undefined;
  const s = (k: string) => String(context[k] ?? '');
  return {
    keyId: Number(s('keyId')),
    storeId: s('storeId'),
    abilities: s('abilities').split(',').filter(Boolean) as Ability[],
    currency: s('currency') || null,
    ...(s('mcp') === 'read-only' ? { mcpReadOnly: true } : {}),
    ...(s('writesPerHour') || s('statusChangesPerHour')
      ? {
          budget: {
            writes: s('writesPerHour') ? Number(s('writesPerHour')) : null,
            statusChanges: s('statusChangesPerHour') ? Number(s('statusChangesPerHour')) : null,
          },
        }
      : {}),
    rate: {
      limit: Number(s('rateLimit')),
      remaining: Number(s('rateRemaining')),
      resetSeconds: Number(s('rateReset')),
      limited: s('rateLimited') === '1',
      contended: s('rateContended') === '1',
    },
  };
}

/**
 * The OAuth endpoints (docs/oauth.md): public like {base}/openapi.json (no authorizer, they are how
 * a client gets a token), served by the `oauth` Lambda. Paths are relative to the API's root, not
 * to API_BASE_PATH: RFC 9728 and RFC 8414 put the well-known documents before the resource's path.
 */
export const OAUTH_ROUTES = [
  {
    operation: 'protectedResourceMetadata',
    method: 'GET',
    path: `/.well-known/oauth-protected-resource${API_BASE_PATH}`,
  },
  {
    operation: 'protectedResourceMetadataMcp',
    method: 'GET',
    path: `/.well-known/oauth-protected-resource${API_BASE_PATH}/mcp`,
  },
  { operation: 'authorizationServerMetadata', method: 'GET', path: '/.well-known/oauth-authorization-server' },
  { operation: 'register', method: 'POST', path: '/oauth/register' },
  { operation: 'authorize', method: 'GET', path: '/oauth/authorize' },
  { operation: 'authorizeStatus', method: 'GET', path: '/oauth/authorize/status' },
  { operation: 'token', method: 'POST', path: '/oauth/token' },
] as const satisfies readonly { operation: string; method: 'GET' | 'POST'; path: string }[];

export type OAuthOperation = (typeof OAUTH_ROUTES)[number]['operation'];

/** The metadata document a 401 names (RFC 9728 §5.1): the HTTP API's, which covers the MCP endpoint too. */
export const resourceMetadataUrl = (root: string) => `${root}/.well-known/oauth-protected-resource${API_BASE_PATH}`;
