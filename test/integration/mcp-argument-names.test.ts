import { describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expectErrorShape, storeWithKey } from '#fixtures/api.ts';
import { snapshot } from '#fixtures/dry-run.ts';
import { useMcpClients } from '#fixtures/mcp-client.ts';

/**
 * Argument names that are also names of Object.prototype's properties are names like any other: an
 * unknown one is the tool error every unknown argument gets, `field` naming it, in the shape of the
 * tool's outputSchema (the SDK client validates it, and throws -32602 on a mismatch).
 */
const connect = useMcpClients('mcp-argument-names-test');

const INHERITED = ['toString', 'constructor', 'valueOf', 'hasOwnProperty', '__proto__'];

/** JSON.parse makes `__proto__` an own property (an object literal would set the prototype instead). */
const withArgument = (args: Record<string, unknown>, name: string) => {
  const others = JSON.stringify(args).slice(1, -1);
  return JSON.parse(`{${JSON.stringify(name)}:1${others ? `,${others}` : ''}}`) as Record<string, unknown>;
};

const call = async (mcp: Client, name: string, args: Record<string, unknown>) =>
  (await mcp.callTool({ name, arguments: args })) as CallToolResult & { structuredContent: any };

describe('MCP arguments named like inherited properties', () => {
  it('each is "not a known field" with field set, on a write tool and a read tool, and nothing is written', async () => {
    const { storeId, key } = await storeWithKey();
    const mcp = await connect(key.token);
    const before = await snapshot(storeId, key.id);
    for (const name of INHERITED) {
      const write = withArgument({ external_id: 'n-1', name: 'Oak', price: 100 }, name);
      expect(Object.hasOwn(write, name)).toBe(true);
      const written = await call(mcp, 'upsert_product', write);
      expect(written.isError, name).toBe(true);
      expectErrorShape(written.structuredContent);
      expect(written.structuredContent).toEqual({
        code: 'validation_failed',
        message: `${name} is not a known field`,
        field: name,
      });
      const read = await call(mcp, 'list_products', withArgument({}, name));
      expect(read.isError, name).toBe(true);
      expect(read.structuredContent).toMatchObject({ code: 'validation_failed', field: name });
    }
    expect(await snapshot(storeId, key.id)).toEqual(before);
  });

  it('HTTP refuses a __proto__ member of a body as MCP refuses the argument', async () => {
    const { client: api } = await storeWithKey();
    const res = await api.put('/catalog/products/n-2', '{"__proto__": 1, "name": "Oak", "price": 100}');
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      code: 'validation_failed',
      message: '__proto__ is not a known field',
      field: '__proto__',
    });
  });
});
