import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildOptions } from 'esbuild';
import { mcpCoreForBundling, mcpServerForBundling } from './mcp-sdk.ts';
import { xraySdkForBundling } from './xray-sdk.ts';
import { tracerForBundling } from './node-http.ts';

const stub = (name: string) => fileURLToPath(new URL(`./bundle-stubs/${name}.ts`, import.meta.url));

/**
 * htmlparser2's ESM Parser module. sanitize-html `require()`s htmlparser2, which resolves to its
 * CommonJS build, while our own `import` resolves to the ESM one: two copies, each with its own
 * `entities`, and the package index drags in domutils and dom-serializer (with a third, older
 * `entities`) that sanitize-html never uses. Both only construct `Parser`, so both get this file.
 */
function htmlparser2Parser(): string {
  return besideCommonjsEntry('htmlparser2', '../esm/Parser.js', 'its ESM Parser');
}

/**
 * util-dynamodb's ESM build, bundled instead of left to the runtime's SDK. The functions use
 * `unmarshall` alone (a failed condition's item, stream records), and an ESM bundle's import of the
 * runtime's CommonJS package costs a resolution and a scan of its exports at every cold start
 * (~9 ms of the Products function's import, `npm run bench`); bundled, it is ~3 KB of plain code.
 */
function utilDynamodbEsm(): string {
  return besideCommonjsEntry('@aws-sdk/util-dynamodb', '../dist-es/index.js', 'its ESM build');
}

/** A file of `pkg` found from its CommonJS entry's folder; fails the build loudly if a release moved it. */
function besideCommonjsEntry(pkg: string, relative: string, what: string): string {
  const file = join(dirname(createRequire(import.meta.url).resolve(pkg)), relative);
  if (!existsSync(file)) throw new Error(`${pkg} moved ${what} (expected ${file}); update infra/bundling.ts`);
  return file;
}

/**
 * What esbuild bundles in place of a package, for every Lambda. Each replacement is code the
 * functions never execute, the one build of a package they use, or the part of it they call;
 * test/infra/bundles.test.ts checks the bundled sanitizer and MCP server behave as the unbundled
 * ones, that the signer calls no more of semver than its stub has, and that no bundle exceeds its
 * size budget.
 */
const BUNDLE_ALIASES: Readonly<Record<string, string>> = {
  htmlparser2: htmlparser2Parser(),
  '@aws-sdk/util-dynamodb': utilDynamodbEsm(),
  // The MCP SDK (v2) with its protocol schemas built at their first use (infra/mcp-sdk.ts). What each copy saves of the MCP
  // function's import, CPU ms over the SDK floor (two runs, each of medians of 21 and 15 fresh node 20 processes per
  // variant, the variants in turn, on the 2-core machine while others worked, 2026-11-28): core's schemas deferred 45 and
  // 39 ms (123 → 78, 149 → 109); the server's constants read from them, with core's deferred, 15 and 3 ms more (93 → 78,
  // 112 → 109). The stand-ins add 2 KiB (579 → 581 KiB); nothing is left out.
  '@modelcontextprotocol/server': mcpServerForBundling(),
  '@modelcontextprotocol/core/internal': mcpCoreForBundling(),
  // Its Node shim is the SDK's own copy of ajv, for a default validator ours replaces (functions/mcp/no-elicitation.ts):
  // 151 KiB of the MCP bundle (732 → 581) and 21 and 28 CPU ms of its import (99 → 78, 138 → 109), measured as above.
  '@modelcontextprotocol/server/_shims': stub('mcp-server-shims'),
  // Its index with the parts the signer never runs (AWS SDK v2 and HTTP patchers, plugins) loaded at their first use (infra/xray-sdk.ts).
  'aws-xray-sdk-core': xraySdkForBundling(),
  // Its provider requires node:http and node:https instead of importing them (infra/node-http.ts).
  '@aws-lambda-powertools/tracer': tracerForBundling(),
  postcss: stub('postcss'),
  dayjs: stub('dayjs'),
  semver: stub('semver'),
};

/** ESM bundles need a require shim for the few CommonJS dependencies. */
export const REQUIRE_BANNER = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/** Every function's memory unless it says otherwise (infra/constructs/service-function.ts); the cost bench bills Lambda time at it. */
export const FUNCTION_MEMORY_MB = 512;
/**
 * Whether the functions log the Lambda platform's start and report lines (~620 bytes an
 * invocation, two invocations a request). Off: Lambda's Duration, Errors and Throttles metrics
 * carry the same, and CloudWatch Logs bills every byte (docs/performance.md).
 */
export const LOG_PLATFORM_LINES = false;

/**
 * How every Lambda is bundled: minified ESM for the functions' runtime (Node 22), the AWS SDK left to the runtime (smaller
 * bundles, faster cold starts), a separate source map without the sources' text (stack traces
 * need only the mappings), and shared/stack-traces.ts injected, which reads that map the first
 * time a stack is printed instead of at every cold start as `--enable-source-maps` would (7–24 ms
 * of an import). ServiceFunction hands these to NodejsFunction; the bundle test and `npm run
 * bench` build with `lambdaEsbuildOptions()`, so they measure what the deploy ships. Text stays
 * UTF-8 (`charset`): esbuild's default writes each non-ASCII character of a message or a library's
 * tables as a `\uXXXX` escape, twice or more its bytes, which Node then reads and parses at every
 * cold start (the MCP bundle: 309 bytes fewer, 2026-12-02). Lambda reads a module as UTF-8.
 */
export const LAMBDA_BUNDLING = {
  target: 'node22',
  minify: true,
  charset: 'utf8',
  sourcesContent: false,
  external: ['@aws-sdk/*'],
  inject: [fileURLToPath(new URL('../shared/stack-traces.ts', import.meta.url))],
} as const;

/** LAMBDA_BUNDLING and the aliases as esbuild build options (with `sourcemap` written beside the bundle). */
export const lambdaEsbuildOptions = (): BuildOptions => ({
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: LAMBDA_BUNDLING.target,
  minify: LAMBDA_BUNDLING.minify,
  charset: LAMBDA_BUNDLING.charset,
  sourcemap: true,
  sourcesContent: LAMBDA_BUNDLING.sourcesContent,
  external: [...LAMBDA_BUNDLING.external],
  inject: [...LAMBDA_BUNDLING.inject],
  banner: { js: REQUIRE_BANNER },
  alias: { ...BUNDLE_ALIASES },
});

/** BUNDLE_ALIASES as NodejsFunction `esbuildArgs`. */
export const aliasArgs = (): Record<string, string> =>
  Object.fromEntries(Object.entries(BUNDLE_ALIASES).map(([from, to]) => [`--alias:${from}`, to]));
