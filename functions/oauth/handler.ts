import type { RequestContext } from '#shared/context.ts';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { pollAuthorization, startAuthorization } from '#app/oauth/authorize.ts';
import type { Limited } from '#app/oauth/caller.ts';
import { registerClient } from '#app/oauth/register.ts';
import { exchangeToken } from '#app/oauth/token.ts';
import { authorizationServerMetadata, protectedResourceMetadata, resources } from '#domain/oauth/oauth.ts';
import { API_BASE_PATH, OAUTH_ROUTES, type OAuthOperation } from '#http/api-routes.ts';
import { callerOf as seenBy } from '#http/caller.ts';
import { apiRoot } from '#http/challenge.ts';
import { errorHeaders, problemOf, statusOf, type Problem } from '#http/error-status.ts';
import { instrument } from '#http/instrument.ts';
import { bodyText } from '#http/middlewares.ts';
import { json } from '#http/response.ts';
import { config } from '#shared/config.ts';
import { isRefused, type Refused } from '#domain/outcome.ts';
import { fetchClientMetadata } from './client-metadata.ts';
import { refusedPage, waitingPage } from './page.ts';

/**
 * The OAuth group (docs/oauth.md): the metadata documents, registration, the authorization page
 * and its poll, and the token endpoint. Public: no authorizer runs before it.
 */
const fetchMetadata = fetchClientMetadata(config().allowPrivateWebhooks);
const noStore = { 'Cache-Control': 'no-store' };

const html = (statusCode: number, body: string): APIGatewayProxyResult => ({
  statusCode,
  headers: {
    'Content-Type': 'text/html; charset=utf-8',
    ...noStore,
    'Content-Security-Policy': "frame-ancestors 'none'",
  },
  body,
});

/**
 * The caller as API Gateway saw it (the address the web ACL and the gateway's own logs use too)
 * and the bounds that apply to it.
 */
const callerOf = (event: APIGatewayProxyEvent) => ({ ...seenBy(event), limits: config().oauthLimits });

/**
 * Over a bound (docs/oauth.md#bounds): 429 with Retry-After and an RFC 6749 body. The authorize
 * page answers it as a 429 too, never as a redirect.
 */
const limited = (out: Limited) =>
  json(
    429,
    { error: 'temporarily_unavailable', error_description: out.description },
    { ...noStore, 'Retry-After': String(out.retryAfterSeconds) },
  );

/** The form a POST sent, or the refusal of a body too large or not UTF-8. */
function form(event: APIGatewayProxyEvent): Record<string, string> | Refused {
  const text = bodyText(event);
  return isRefused(text) ? text : Object.fromEntries(new URLSearchParams(text));
}

/** `text` as JSON, or undefined when it is not JSON. */
function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const badMetadata = (description: string) =>
  json(400, { error: 'invalid_client_metadata', error_description: description });

const operations: Record<
  OAuthOperation,
  (ctx: RequestContext, event: APIGatewayProxyEvent, root: string) => Promise<APIGatewayProxyResult>
> = {
  protectedResourceMetadata: async (_ctx, _e, root) =>
    json(200, protectedResourceMetadata(root, resources(root, API_BASE_PATH)[0]!.resource)),
  protectedResourceMetadataMcp: async (_ctx, _e, root) =>
    json(200, protectedResourceMetadata(root, resources(root, API_BASE_PATH)[1]!.resource)),
  authorizationServerMetadata: async (_ctx, _e, root) => json(200, authorizationServerMetadata(root)),
  register: async (ctx, event) => {
    // Too large is 413 as on every OAuth endpoint; a body that cannot be metadata is RFC 7591's 400.
    const text = bodyText(event);
    if (isRefused(text)) return text.code === 'payload_too_large' ? oauthError(text) : badMetadata(text.message);
    const body = parsed(text);
    if (body === undefined) return badMetadata('the body is not JSON');
    const out = await registerClient(ctx, body, Date.now(), callerOf(event));
    if (out.kind === 'limited') return limited(out);
    if (out.kind === 'invalid') return badMetadata(out.reason);
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
  authorize: async (ctx, event, root) => {
    const out = await startAuthorization(
      ctx,
      event.queryStringParameters ?? {},
      root,
      API_BASE_PATH,
      Date.now(),
      fetchMetadata,
      callerOf(event),
    );
    if (out.kind === 'limited') return limited(out);
    if (out.kind === 'refused') return html(400, refusedPage(out.message));
    if (out.kind === 'redirect') return { statusCode: 302, headers: { Location: out.url, ...noStore }, body: '' };
    return html(200, waitingPage(out.request, out.handle, out.redirectHost));
  },
  authorizeStatus: async (ctx, event, root) =>
    json(200, await pollAuthorization(ctx, event.queryStringParameters?.request ?? '', root, Date.now()), noStore),
  token: async (ctx, event, root) => {
    const sent = form(event);
    if (isRefused(sent)) return oauthError(sent);
    const out = await exchangeToken(ctx, sent, root, API_BASE_PATH, Date.now());
    if (out.ok) return json(200, out.body, { ...noStore, Pragma: 'no-cache' });
    const body = { error: out.error, error_description: out.description };
    // Contention between parallel requests of one client is that client's to retry, not a fault.
    if (out.error === 'temporarily_unavailable')
      return json(429, body, { ...noStore, 'Retry-After': String(out.retryAfterSeconds) });
    return json(400, body, noStore);
  },
};

/**
 * Every failure of an OAuth endpoint is an RFC 6749 error body (`{error, error_description}`),
 * never API Gateway's 502 for a function that threw: a store that stops answering or the
 * request's deadline (503 `temporarily_unavailable` with Retry-After, what RFC 6749 §4.1.2.1 names
 * for a server that cannot serve now), a body over the limit (413), a bug (500 `server_error`).
 * The status comes from the one error table (shared/http/error-status.ts); only the body's form is
 * OAuth's. The cause of a 500 goes to the log with the request id, never to the client.
 */
const failure = (err: unknown, requestId: string): APIGatewayProxyResult => oauthError(problemOf(err, requestId));

/** An outcome or a fault with its code, as the RFC 6749 error body with the error table's status. */
function oauthError(problem: Problem): APIGatewayProxyResult {
  const status = statusOf(problem.code);
  const error =
    status === 503 || status === 429 ? 'temporarily_unavailable' : status >= 500 ? 'server_error' : 'invalid_request';
  return json(status, { error, error_description: problem.message }, { ...noStore, ...errorHeaders(problem) });
}

async function route(ctx: RequestContext, event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  const atPath = OAUTH_ROUTES.filter((r) => r.path === event.resource);
  const method = event.httpMethod.toUpperCase();
  if (atPath.length === 0) return json(404, { error: 'invalid_request', error_description: 'No such endpoint.' });
  const matched = atPath.find((r) => r.method === method || (method === 'HEAD' && r.method === 'GET'));
  if (!matched)
    return json(
      405,
      { error: 'invalid_request', error_description: `${method} is not allowed here.` },
      { Allow: atPath.map((r) => r.method).join(', ') },
    );
  return operations[matched.operation](ctx, event, apiRoot(event));
}

/** Wrapped like the API's handlers: log context, metrics per operation, and the request's deadline. */
export const handler = instrument(
  async (event: APIGatewayProxyEvent, context: Context, ctx): Promise<APIGatewayProxyResult> => {
    try {
      return await route(ctx, event);
    } catch (err) {
      return failure(err, event.requestContext?.requestId ?? context?.awsRequestId ?? 'unknown');
    }
  },
);
