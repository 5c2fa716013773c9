import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import {
  createMcpHandler,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import {
  authorizedKey,
  bodyText,
  internal,
  resolveRoute,
  responseShaper,
  withRequestState,
} from '#http/middlewares.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '#domain/text.ts';
import { absoluteUrl, instrument, NO_EARLY_TIMEOUT } from '#http/http-handler.ts';
import { isRefused, refused, type Refused } from '#domain/outcome.ts';
import { errorResponse } from '#http/error-status.ts';
import { json } from '#http/response.ts';
import { createMcpServer, type McpRequestContext } from './server.ts';
import { invalidParamsAnswer, unservedMethodAnswer } from './message-check.ts';
import { isForeignOrigin } from '#http/origin.ts';
import { claimAllowance, isSetUp } from './allowance.ts';
import { errorFields, log } from '#shared/log.ts';

/** The context of each request on its way through the SDK's entry, found by the Request it hands the server factory. */
const contexts = new WeakMap<Request, McpRequestContext>();

/**
 * The SDK's entry for 2026-07-28 requests (docs/mcp.md#protocol-revisions), built once per
 * container: it builds one server per request from that request's context. `auto` answers JSON
 * unless a handler sends a message before its result, which ours never do (`json` would say so in a
 * warning at every cold start). What it reports out of band is logged as a warning.
 */
const modern = createMcpHandler(
  ({ requestInfo }) => {
    const ctx = requestInfo && contexts.get(requestInfo);
    if (!ctx) throw new Error('an MCP request reached the server factory without its context');
    return createMcpServer(ctx);
  },
  {
    legacy: 'reject',
    responseMode: 'auto',
    // What the SDK answered without our code (a rejected request, an error beside a response) is
    // logged, never silent: it leaves the answer as it is.
    onerror: (error) => log('warn', 'mcp: the SDK reported an error', errorFields(error)),
  },
);

/**
 * POST /mcp: the MCP tool server over Streamable HTTP, stateless, JSON responses (no SSE). The
 * same middlewares as every endpoint answer 401/429 first; then the SDK takes the request as a
 * fetch Request (a Lambda has no Node req/res) and answers a Response, which becomes the proxy
 * result: its per-request entry for 2026-07-28, its stateless transport for the 2025 revisions.
 * One server per request: nothing outlives it, so any Lambda container can answer any request.
 */
const chain = middy<APIGatewayProxyEvent, APIGatewayProxyResult>(NO_EARLY_TIMEOUT)
  .use(httpHeaderNormalizer())
  .use(responseShaper())
  .use(resolveRoute())
  .use(authorizedKey())
  .handler(async (event, context) => {
    const state = internal({ context });
    const body = bodyOf(event);
    if (isRefused(body)) return errorResponse(body);
    // One JSON-RPC message per POST: each tool call counts once against the key's rate limit, so
    // a batch of 100 calls would cost one. (Batching is gone from MCP since 2025-06-18 anyway.)
    if (body.trimStart().startsWith('[')) {
      return json(400, {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'JSON-RPC batches are not supported: send one message per request.' },
      });
    }
    // The DNS-rebinding rule of the MCP transport: a browser page of another origin must not reach
    // a server it found by name; clients outside browsers send no Origin.
    if (isForeignOrigin(event))
      return errorResponse(refused('forbidden', 'Requests from another web origin are refused (Origin header).'));
    const message = parsedMessage(body);
    const unallowed = await claimAllowance(state.ctx, event, state, isSetUp(message));
    if (unallowed) return errorResponse(unallowed);
    const invalid = invalidParamsAnswer(message) ?? unservedMethodAnswer(message);
    if (invalid) return json(200, invalid);
    const url = absoluteUrl(event);
    const ctx: McpRequestContext = {
      requestContext: state.ctx,
      principal: state.principal!,
      requestId: event.requestContext?.requestId ?? '',
      apiUrl: url.replace(/\/mcp$/, ''),
      rawArguments: toolArguments(message),
    };
    // The message as parsed here, so the SDK does not read it back from a body stream: releasing
    // that stream's reader makes Node build two errors, and formatting their stacks made the first
    // request of every container parse the bundle's source map (shared/stack-traces.ts). Text that
    // is not JSON goes to the SDK as a body, for its own -32700 answer. The SDK's own size limit
    // (4 MiB) applies only to a body it reads; ours (1 MiB, bodyOf) applies to every request.
    const request = new Request(url, {
      method: 'POST',
      headers: headersOf(event),
      body: message === undefined ? body : undefined,
    });
    const options = message === undefined ? undefined : { parsedBody: message };
    let response: Response;
    if (await isLegacyRequest(request, message)) response = await answerLegacy(ctx, request, options);
    else {
      contexts.set(request, ctx);
      response = await modern.fetch(request, options);
    }
    return {
      statusCode: response.status,
      headers: canonicalHeaders(response.headers),
      body: await response.text(),
    };
  });

/** The Lambda: the request context made at its edge (instrument), then the chain with it. */
export const handler = instrument<APIGatewayProxyEvent, APIGatewayProxyResult>((event, context, ctx) =>
  chain(event, withRequestState(context, ctx)),
);

type Options = { parsedBody: unknown } | undefined;

/**
 * A request of the 2025 revisions (2025-11-25, 2025-06-18, ...; `initialize` negotiates one): the
 * stateless Streamable HTTP transport answering JSON, as the SDK's own stateless fallback would
 * except that it answers with a JSON body rather than an event stream.
 */
async function answerLegacy(ctx: McpRequestContext, request: Request, options: Options): Promise<Response> {
  const server = createMcpServer(ctx);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, options);
  } finally {
    await server.close();
  }
}

function headersOf(event: APIGatewayProxyEvent): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(event.headers ?? {})) if (value !== undefined) headers.set(name, value);
  // The API's clients send `Accept: application/json` (docs/contract.md#keys-and-abilities). The transport insists on also
  // seeing text/event-stream, which only matters for streamed answers; this server always answers
  // JSON, so a client that accepts JSON is accepted.
  const accept = headers.get('accept') ?? '';
  if (/application\/json|\*\/\*/.test(accept) && !accept.includes('text/event-stream'))
    headers.set('accept', `${accept}, text/event-stream`);
  if (accept === '') headers.set('accept', 'application/json, text/event-stream');
  return headers;
}

/**
 * The raw JSON-RPC text: parse errors are the transport's to answer (JSON-RPC -32700); size (413),
 * encoding and depth are ours, checked before the SDK parses and validates the message.
 */
function bodyOf(event: APIGatewayProxyEvent): string | Refused {
  const text = bodyText(event);
  if (isRefused(text) || !nestsDeeperThan(text)) return text;
  return refused('invalid_json', `The request body nests deeper than ${MAX_JSON_DEPTH} levels.`);
}

/** The body as JSON, or undefined if it is not JSON (JSON.parse never answers undefined). */
function parsedMessage(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** A tools/call's arguments as parsed here, every own member kept (`__proto__` included). */
function toolArguments(message: unknown): Record<string, unknown> | undefined {
  const m = message as { method?: unknown; params?: { arguments?: unknown } } | undefined;
  const args = m?.method === 'tools/call' ? m.params?.arguments : undefined;
  return args !== null && typeof args === 'object' && !Array.isArray(args)
    ? (args as Record<string, unknown>)
    : undefined;
}

/** `Content-Type`, not `content-type`: the rest of the stack writes headers in canonical case and must not add a twin. */
function canonicalHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of headers)
    out[name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase())] = value;
  return out;
}
