import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { QUICK_JVM } from './test/fixtures/quick-jvm.ts';
import { STREAM_TEST_TIMEOUT_MS } from './test/fixtures/stream-wait.ts';

/**
 * Eight projects: `npx vitest run` runs them all, `npm run test:<name>` one of them, `npm test`
 * all but timing (a wall-clock bound, run on an idle machine: docs/testing.md, "Timed tests"), and
 * `npm run test:quick` unit, lint and usecase.
 * - unit: pure code, no local stack, so neither DynamoDB Local nor Java. Every file runs in one
 *   thread that keeps its module cache (isolate: false, singleThread): they hold no state between
 *   tests, and the files spend most of their time importing the same modules. Spread over workers,
 *   each worker set up every file it ran afresh and imported the shared modules again: 17 s wall
 *   on the idle 2-core machine, against 9 s in one thread, which also leaves the other core free.
 * - lint: the gates that run a whole tool over the tree (dependency-cruiser's import rules,
 *   Redocly on the OpenAPI document): seconds each, so they stay out of the quick unit loop.
 * - usecase: the use cases of shared/app called in-process (test/fixtures/usecase.ts) against one
 *   DynamoDB Local of the project's own, started with its table by globalSetup: their logic
 *   without HTTP, the authorizer or the stream consumers.
 * - integration: the contract files, against a local stack of their own (DynamoDB Local, gateway,
 *   queue, stream consumers), started by globalSetup.
 * - load: the bulk-load and saturation files (test/load), against another stack of their own, so
 *   that their thousands of writes never sit in the contract files' stream.
 * - faults: the files that kill or restart a stack without loading it (test/faults); each starts
 *   the stacks it breaks itself, so they run beside the contract files and need no shared stack.
 * - infra: CDK templates synthesised in memory, without bundling; needs no stack either.
 * - timing: the few tests whose promise is a time, on a stack of their own (test/timing).
 * The rehearsal (test/rehearsal) has its own config, vitest.rehearsal.config.ts: the end-to-end
 * files against the stack built from cdk.out.
 */
const shared = {
  testTimeout: 30_000,
  hookTimeout: 60_000,
  env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
};
/**
 * Tests against a local stack spawn processes and wait for streams, queues and retries on a machine
 * that may be saturated (CI: two shared cores). A timeout there is no assertion, only a guard against
 * a test that hangs, so it is generous: what a test means is waited for as an event, and a wait for a
 * delivery or an indexed name has the stream's deadline (test/fixtures/stream-wait.ts), so the guard
 * is the stream's.
 */
const ownStack = {
  ...shared,
  testTimeout: STREAM_TEST_TIMEOUT_MS,
  hookTimeout: STREAM_TEST_TIMEOUT_MS,
  setupFiles: ['test/fixtures/env.ts'],
  pool: 'forks' as const,
};
const stack = { ...ownStack, globalSetup: ['test/fixtures/global-setup.ts'] };

/**
 * Files run side by side, in a fork each: a file against a stack spends most of its time waiting
 * (for the stack's answers, a stream, a retry schedule), and every file has its own stores and keys.
 * vitest's default on 2 cores is one fork, which ran the 100-odd files one after another.
 */
const FORKS = 4;

/**
 * The files that take minutes (in full runs on the idle machine, 2026-11-29: documented-commands
 * 288–321 s, bundles 168–207 s, crash-durability 105–185 s, contract-conformance 84–145 s,
 * oauth-agent-e2e 88–117 s, console 100–104 s), started first. Without vitest's cache of
 * durations (a fresh clone, so every CI run) files start largest first, which put such files late
 * among the 80-odd spread over forks, so they could still be running after the others were done.
 * Each file is still one fork's, and the others keep vitest's order. documented-commands, bundles,
 * crash-durability and oauth-agent-e2e were made to wait less on 2026-12-01 (docs/testing.md, "The
 * slowest files"), measured only on a loaded machine, which cannot rank them: the order stays until a
 * run on the idle machine does.
 */
const SLOW_FIRST = [
  'test/integration/documented-commands.test.ts',
  'test/infra/bundles.test.ts',
  'test/integration/contract-conformance.test.ts',
  'test/integration/oauth-agent-e2e.test.ts',
  'test/faults/crash-durability.test.ts',
  'test/integration/console.test.ts',
];
class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const at = SLOW_FIRST.findIndex((slow) => file.moduleId.endsWith(`/${slow}`));
      return at < 0 ? SLOW_FIRST.length : at;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    poolOptions: { forks: { maxForks: FORKS, minForks: 1 } },
    sequence: { sequencer: SlowFirst },
    projects: [
      {
        test: {
          ...shared,
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          pool: 'threads',
          isolate: false,
          poolOptions: { threads: { singleThread: true } },
        },
      },
      {
        test: {
          ...stack,
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          // Its stack (test/fixtures/global-setup.ts passes a project's env on) and the stacks its
          // files start: test/fixtures/quick-jvm.ts says why.
          env: { ...shared.env, ...QUICK_JVM },
          // oauth-agent-e2e runs its six cases side by side; vitest's default of 5 held the sixth back.
          maxConcurrency: 6,
        },
      },
      {
        test: {
          ...shared,
          name: 'usecase',
          include: ['test/usecase/**/*.test.ts'],
          // One DynamoDB Local and its table, nothing else (test/fixtures/usecase-setup.ts); the
          // workers are pointed at it as the contract files' are.
          globalSetup: ['test/fixtures/usecase-setup.ts'],
          setupFiles: ['test/fixtures/env.ts'],
          env: { ...shared.env, ...QUICK_JVM },
          pool: 'forks',
          // A guard against a hang, not an assertion: on the loaded 2-core machine the state
          // machine's 42 orders alone took 30 s.
          testTimeout: 180_000,
        },
      },
      {
        test: {
          ...stack,
          name: 'load',
          include: ['test/load/**/*.test.ts'],
          // One file at a time: these files saturate a stack on purpose (thousands of writes, dozens
          // of writers on one item, brownout's writers against a store it stops), which a file
          // beside them would take for its own failure. A singleFork project runs after every other file has finished
          // (docs/testing.md says why it stays so).
          poolOptions: { forks: { singleFork: true } },
        },
      },
      {
        test: {
          ...ownStack,
          name: 'faults',
          include: ['test/faults/**/*.test.ts'],
          env: { ...shared.env, ...QUICK_JVM },
        },
      },
      {
        test: {
          ...stack,
          name: 'timing',
          include: ['test/timing/**/*.test.ts'],
          // Tests with a wall-clock bound that the issue they close asks for (docs/testing.md,
          // "Timed tests"): on a stack of their own, one file at a time, and outside `npm test`,
          // whose other files share the CPU with them.
          poolOptions: { forks: { singleFork: true } },
        },
      },
      { test: { ...shared, name: 'lint', include: ['test/lint/**/*.test.ts'], pool: 'forks' } },
      { test: { ...shared, name: 'infra', include: ['test/infra/**/*.test.ts'], pool: 'forks' } },
    ],
  },
});
