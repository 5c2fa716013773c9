import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { exchangeToken, pollAuthorization, registerClient, startAuthorization } from '#app/oauth.ts';
import { authorizationServerMetadata, protectedResourceMetadata, resources } from '#domain/oauth/oauth.ts';
import { API_BASE_PATH, OAUTH_ROUTES, type OAuthOperation } from '#http/api-routes.ts';
import { apiRoot } from '#http/challenge.ts';
import { bodyText } from '#http/middlewares.ts';
import { config } from '#shared/config.ts';
import { fetchClientMetadata } from './client-metadata.ts';
import { refusedPage, waitingPage } from './page.ts';

/**
 * The OAuth group (docs/oauth.md): the metadata documents, registration, the authorization page
 * and its poll, and the token endpoint. Public: no authorizer runs before it.
 */
const fetchMetadata = fetchClientMetadata(config().allowPrivateWebhooks);
const noStore = { 'Cache-Control': 'no-store' };

const json = (statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult => ({
  statusCode,
  headers: { 'Content-Type': 'application/json', ...headers },
  body: JSON.stringify(body),
});
const html = (statusCode: number, body: string): APIGatewayProxyResult => ({
  statusCode,
  headers: {
    'Content-Type': 'text/html; charset=utf-8',
    ...noStore,
    'Content-Security-Policy': "frame-ancestors 'none'",
  },
  body,
});

function form(event: APIGatewayProxyEvent): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(bodyText(event)));
}

const operations: Record<
  OAuthOperation,
  (event: APIGatewayProxyEvent, root: string) => Promise<APIGatewayProxyResult>
> = {
  protectedResourceMetadata: async (_e, root) =>
    json(200, protectedResourceMetadata(root, resources(root, API_BASE_PATH)[0]!.resource)),
  protectedResourceMetadataMcp: async (_e, root) =>
    json(200, protectedResourceMetadata(root, resources(root, API_BASE_PATH)[1]!.resource)),
  authorizationServerMetadata: async (_e, root) => json(200, authorizationServerMetadata(root)),
  register: async (event) => {
    let body: unknown;
    try {
      body = JSON.parse(bodyText(event));
    } catch {
      return json(400, { error: 'invalid_client_metadata', error_description: 'the body is not JSON' });
    }
    const out = await registerClient(body, Date.now());
    if (!out.ok) return json(400, { error: 'invalid_client_metadata', error_description: out.reason });
    return json(
      201,
      {
        ...out.client,
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
      noStore,
    );
  },
  authorize: async (event, root) => {
    const out = await startAuthorization(
      event.queryStringParameters ?? {},
      root,
      API_BASE_PATH,
      Date.now(),
      fetchMetadata,
    );
    if (out.kind === 'refused') return html(400, refusedPage(out.message));
    if (out.kind === 'redirect') return { statusCode: 302, headers: { Location: out.url, ...noStore }, body: '' };
    return html(200, waitingPage(out.request, out.handle, out.redirectHost));
  },
  authorizeStatus: async (event, root) =>
    json(200, await pollAuthorization(event.queryStringParameters?.request ?? '', root, Date.now()), noStore),
  token: async (event, root) => {
    const out = await exchangeToken(form(event), root, API_BASE_PATH, Date.now());
    if (out.ok) return json(200, out.body, { ...noStore, Pragma: 'no-cache' });
    const body = { error: out.error, error_description: out.description };
    // Contention between parallel requests of one client is that client's to retry, not a fault.
    if (out.error === 'temporarily_unavailable')
      return json(429, body, { ...noStore, 'Retry-After': String(out.retryAfterSeconds) });
    return json(400, body, noStore);
  },
};

export async function handler(event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  const route = OAUTH_ROUTES.find((r) => r.path === event.resource);
  const method = event.httpMethod.toUpperCase();
  if (!route) return json(404, { code: 'not_found', message: 'No such endpoint.', field: null });
  const allowed = OAUTH_ROUTES.filter((r) => r.path === route.path).map((r) => r.method);
  const matched = OAUTH_ROUTES.find(
    (r) => r.path === event.resource && (r.method === method || (method === 'HEAD' && r.method === 'GET')),
  );
  if (!matched)
    return json(
      405,
      { code: 'method_not_allowed', message: `${method} is not allowed here.`, field: null },
      { Allow: allowed.join(', ') },
    );
  return operations[matched.operation](event, apiRoot(event));
}
