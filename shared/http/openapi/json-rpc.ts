/** The JSON-RPC 2.0 envelope the MCP endpoint speaks; the MCP messages inside are the SDK's. */
import * as v from 'valibot';

const id = v.union([v.string(), v.number(), v.null()]);

export const JsonRpcRequest = v.pipe(
  v.looseObject({
    jsonrpc: v.literal('2.0'),
    method: v.string(),
    id: v.optional(id),
    params: v.optional(v.record(v.string(), v.unknown())),
  }),
  v.description('One JSON-RPC request or notification (initialize, tools/list, tools/call, ...).'),
);

export const JsonRpcResponse = v.looseObject({
  jsonrpc: v.literal('2.0'),
  id,
  result: v.optional(v.record(v.string(), v.unknown())),
  error: v.optional(v.looseObject({ code: v.number(), message: v.string() })),
});
