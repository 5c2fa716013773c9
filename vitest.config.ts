import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The rehearsal files run in their own project (vitest.rehearsal.config.ts), against the synthesized app.
    exclude: [...configDefaults.exclude, 'test/rehearsal/**'],
    globalSetup: ['test/fixtures/global-setup.ts'],
    setupFiles: ['test/fixtures/env.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
