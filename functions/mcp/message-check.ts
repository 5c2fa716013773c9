import { ProtocolErrorCode } from '@modelcontextprotocol/server';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The params of the requests this server handles, checked before the SDK sees them: the SDK
 * validates them with zod inside its request handler and answers a mismatch as -32603 (internal
 * error) with the zod issue dump. Wrong JSON types are the caller's error, -32602 (invalid params),
 * with one line naming what is wrong.
 */
function problemOf(method: unknown, params: unknown): string | undefined {
  if (method !== 'tools/call' && method !== 'tools/list') return undefined;
  if (params !== undefined && !isObject(params)) return 'params must be an object';
  const p = (params ?? {}) as Record<string, unknown>;
  if (p._meta !== undefined && !isObject(p._meta)) return 'params._meta must be an object';
  if (method === 'tools/list')
    return p.cursor === undefined || typeof p.cursor === 'string' ? undefined : 'params.cursor must be a string';
  if (typeof p.name !== 'string') return 'params.name must be a string (the tool name)';
  if (p.arguments !== undefined && !isObject(p.arguments)) return 'params.arguments must be an object';
  return undefined;
}

/**
 * A JSON-RPC error answer for a request (`message`, the parsed body) with params of the wrong
 * shape, or undefined to go on. A body that is not JSON (undefined) is the transport's to answer
 * (-32700).
 */
export function invalidParamsAnswer(message: unknown): object | undefined {
  if (!isObject(message) || message.jsonrpc !== '2.0' || message.id === undefined) return undefined;
  const problem = problemOf(message.method, message.params);
  return problem === undefined
    ? undefined
    : { jsonrpc: '2.0', id: message.id, error: { code: ProtocolErrorCode.InvalidParams, message: problem } };
}

/**
 * Methods the SDK would serve that this server refuses before it: `subscriptions/listen`
 * (2026-07-28) opens an event stream that stays open for list-change notifications, which a Lambda
 * answering one JSON body per request cannot hold (the invocation would run to its timeout); the
 * tool list changes only with the key, which every request reads afresh. JSON-RPC -32601, as for
 * any method a server does not offer.
 */
const UNSERVED = new Set(['subscriptions/listen']);

/** A JSON-RPC error answer for a request (`message`, the parsed body) of a method in UNSERVED, or undefined to go on. */
export function unservedMethodAnswer(message: unknown): object | undefined {
  if (!isObject(message) || message.id === undefined || typeof message.method !== 'string') return undefined;
  if (!UNSERVED.has(message.method)) return undefined;
  return {
    jsonrpc: '2.0',
    id: message.id,
    error: {
      code: ProtocolErrorCode.MethodNotFound,
      message: `Method not found: ${message.method} (this server sends no notifications; list the tools again instead)`,
    },
  };
}
