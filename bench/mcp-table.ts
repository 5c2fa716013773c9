import { freePort } from '#fixtures/free-port.ts';
import { startDynamoDbLocal } from '#emulation/local/dynamodb-local.ts';
import { ensureTable, waitForStore } from '#emulation/local/bootstrap.ts';
import { resetDbClients } from '#db/core/client.ts';
import { resetConfig } from '#shared/config.ts';
import { handler as admin } from '#functions/admin/handler.ts';
import { ABILITIES } from '#domain/key/abilities.ts';

/**
 * A table and a key for running the MCP bundle's handler outside the stack (`npm run bench`,
 * test/infra/bundles.test.ts): MCP set-up counts against its own per-key limit on the key's token
 * item (docs/mcp.md#rate-limit), so even `initialize` needs the key's item. DynamoDB Local in
 * memory on a free port; `env` is what a child process running a bundle needs to reach it.
 */
export interface McpTable {
  token: string;
  keyId: number;
  storeId: string;
  env: Record<string, string>;
  stop(): Promise<void>;
}

export async function startMcpTable(tableName = 'mcp-bundle'): Promise<McpTable> {
  const store = startDynamoDbLocal({ port: await freePort(), dataDir: null });
  const env = {
    DYNAMODB_ENDPOINT: store.endpoint,
    TABLE_NAME: tableName,
    AWS_REGION: process.env.AWS_REGION ?? 'eu-west-1',
    AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? 'local',
    AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? 'local',
  };
  Object.assign(process.env, env);
  resetConfig();
  resetDbClients();
  try {
    await waitForStore();
    await ensureTable();
    const storeId = 'bundle-store';
    const made = await admin({
      command: 'stores create',
      args: { id: storeId, name: 'Bundle store', currency: 'EUR' },
    });
    if (!made.ok) throw new Error(`stores create: ${made.error.message}`);
    const key = await admin({
      command: 'keys create',
      args: { store: storeId, name: 'bundle key', abilities: ABILITIES.join(',') },
    });
    if (!key.ok) throw new Error(`keys create: ${key.error.message}`);
    const { id, token } = key.data as { id: number; token: string };
    return { token, keyId: id, storeId, env, stop: () => store.stop() };
  } catch (err) {
    await store.stop();
    throw err;
  }
}
