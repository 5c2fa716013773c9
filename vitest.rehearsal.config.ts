import { defineConfig } from 'vitest/config';
import { QUICK_JVM } from './test/fixtures/quick-jvm.ts';

/**
 * `npm run test:rehearsal`: the end-to-end flows (keys, catalog, orders with webhooks, content,
 * MCP on both protocol eras) against the rehearsal stack (the synthesized CDK app, IAM enforced),
 * plus the proof that a missing grant is caught.
 */
export default defineConfig({
  test: {
    include: [
      'test/integration/auth.test.ts',
      'test/integration/catalog-products.test.ts',
      'test/integration/webhooks-orders.test.ts',
      'test/integration/content-publish.test.ts',
      'test/integration/mcp.test.ts',
      'test/integration/mcp-revisions.test.ts',
      'test/rehearsal/*.test.ts',
    ],
    globalSetup: ['test/rehearsal/global-setup.ts'],
    setupFiles: ['test/fixtures/env.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: 'forks',
    // Two files at a time (vitest's default on 2 cores is one): one at a time the run used 140 % of
    // the two cores, waiting on the stack; two at a time it takes 168 s instead of 193 s on the
    // idle machine for the same CPU. iam-denied and console start stacks of their own.
    poolOptions: { forks: { maxForks: 2 } },
    // The stores of iam-denied, console, token-refusal and oauth-store-stopped (test/fixtures/quick-jvm.ts says why).
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...QUICK_JVM },
  },
});
