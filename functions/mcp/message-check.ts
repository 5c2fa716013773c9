import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';

/**
 * The params of the requests this server handles, checked before the SDK sees them: the SDK
 * validates them with zod inside its request handler and answers a mismatch as -32603 (internal
 * error) with the zod issue dump. Wrong JSON types are the caller's error, -32602 (invalid params),
 * with one line naming what is wrong.
 */
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

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
    : { jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.InvalidParams, message: problem } };
}
