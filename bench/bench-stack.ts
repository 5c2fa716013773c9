/**
 * A local stack for one bench section: DynamoDB Local in memory on a free port, the gateway, one
 * store, and keys with every ability. Every request's DynamoDB calls, units and latency reach
 * `samples` through the gateway's onRequest hook (authorizer and handler counted together by the
 * SDK middleware in shared/db/core/client.ts).
 */
import { newContext } from '#shared/context.ts';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
process.env.LOG_LEVEL ??= 'warn';
import type { GatewayOptions } from '#emulation/local/gateway.ts';
import { startLocalStack, type LocalStack } from '#emulation/local/stack.ts';
import { pendingNameCount } from '#db/name-index/repo.ts';
import { freePort } from '#fixtures/free-port.ts';

export type Sample = { path: string; ms: number; calls: number; rcu: number; wcu: number; status: number; ops: string };

export interface BenchStack {
  readonly stack: LocalStack;
  readonly storeId: string;
  /** Samples since the last `resetSamples()`. */
  readonly samples: () => Sample[];
  resetSamples(): void;
  /** Key tokens of the store, each with every ability. */
  readonly tokens: string[];
  /** Resolves once the stack's name indexer has taken in every name of the store (filter[name] reads postings, not pending entries). */
  namesIndexed(): Promise<void>;
  /** An admin command run in-process, as the admin Lambda runs it. */
  admin<T>(command: string, args: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
}

const ALL_ABILITIES = 'catalog:read,catalog:write,orders:read,orders:write-status,content:read,content:write';

export async function startBenchStack(options: {
  storeId: string;
  keys: number;
  env?: Record<string, string>;
  requestLog?: GatewayOptions['requestLog'];
  onAuthorized?: GatewayOptions['onAuthorized'];
  /** false: the stack runs no stream consumers (fan-out, name indexer). */
  streamConsumers?: boolean;
}): Promise<BenchStack> {
  let samples: Sample[] = [];
  const stack = await startLocalStack({
    port: 0,
    dynamodbPort: await freePort(),
    dataDir: null,
    tableName: 'bench',
    ...(options.streamConsumers === false ? { streamConsumers: false } : {}),
    env: { LOG_LEVEL: 'warn', ...options.env },
    gateway: {
      ...(options.requestLog ? { requestLog: options.requestLog } : {}),
      ...(options.onAuthorized ? { onAuthorized: options.onAuthorized } : {}),
      onRequest: (r) =>
        samples.push({
          path: r.path,
          ms: r.ms,
          calls: r.calls,
          rcu: r.rcu,
          wcu: r.wcu,
          status: r.status,
          ops: r.ops.join(','),
        }),
    },
  });
  const { handler } = await import('#functions/admin/handler.ts');
  const admin = async <T>(command: string, args: Record<string, unknown>): Promise<T> => {
    const out = await handler({ command, args });
    if (!out.ok) throw new Error(`${command}: ${out.error.message}`);
    return out.data as T;
  };
  try {
    await admin('stores create', { id: options.storeId, name: 'Bench', currency: 'EUR' });
    const tokens: string[] = [];
    for (let i = 0; i < options.keys; i++) {
      tokens.push(
        (
          await admin<{ token: string }>('keys create', {
            store: options.storeId,
            name: `k${i}`,
            abilities: ALL_ABILITIES,
          })
        ).token,
      );
    }
    // A cold container reads the token item before its first conditional write: warm every key once.
    for (const token of tokens)
      await (
        await fetch(`${stack.baseUrl}/products?limit=1`, { headers: { Authorization: `Bearer ${token}` } })
      ).arrayBuffer();
    samples = [];
    return {
      stack,
      storeId: options.storeId,
      samples: () => samples,
      resetSamples: () => void (samples = []),
      tokens,
      admin,
      namesIndexed: async () => {
        while ((await pendingNameCount(newContext(), options.storeId)) > 0)
          await new Promise((r) => setTimeout(r, 200));
      },
      stop: () => stack.stop(),
    };
  } catch (err) {
    await stack.stop();
    throw err;
  }
}

export const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? 0;
