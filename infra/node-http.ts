import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageFolder, transformedCopy } from './bundle-cache.ts';

/**
 * node:http as a bundle loads it: through `require`, never as an ES module.
 *
 * On Node 22, the functions' runtime, node:http exports WebSocket, CloseEvent and MessageEvent as
 * getters that load undici, and the ES module namespace of a builtin is built by reading every
 * export: `import http from 'node:http'` costs ~25 ms of a cold start, where `require('node:http')`
 * costs ~0.4 (the SDK has loaded the module itself by then). Node 20 has no such exports, so the
 * bench, run on Node 20, shows the difference only with BENCH_NODE set to a Node 22.
 *
 * functions/webhooks/post.ts requires node:http and node:https. Powertools Tracer's provider
 * imports both for an HTTP patch the signer never turns on (`captureHTTPsRequests: false`), so the
 * bundles take Tracer from a copy whose provider requires them instead (`tracerForBundling`,
 * aliased in infra/bundling.ts). test/infra/bundles.test.ts fails if a bundle imports node:http as
 * a module.
 */

/** `import x from 'node:http'` / `'node:https'` at the start of a line. */
const HTTP_IMPORT = /^import (\w+) from '(node:https?)';$/gm;

/** `source` (an ES module) with its default imports of node:http and node:https turned into requires. */
export function requireHttpBuiltins(source: string): { code: string; replaced: string[] } {
  const replaced: string[] = [];
  const code = source.replace(HTTP_IMPORT, (_line, name: string, builtin: string) => {
    replaced.push(builtin);
    return `const ${name} = __requireBuiltin(${JSON.stringify(builtin)});`;
  });
  if (replaced.length === 0) return { code: source, replaced };
  // Imports are hoisted, so this may come first whatever the order of the file's imports.
  return {
    code: `import { createRequire as __createRequire } from 'node:module';\nconst __requireBuiltin = __createRequire(import.meta.url);\n${code}`,
    replaced,
  };
}

/** The file of Tracer that imports node:http and node:https. */
const PROVIDER = join('lib', 'esm', 'provider', 'ProviderService.js');

/** Tracer's provider (`source`) with both imports turned into requires; fails if it does not import both as expected. */
export function tracerProvider(source: string): string {
  const { code, replaced } = requireHttpBuiltins(source);
  if ([...replaced].sort().join() !== 'node:http,node:https')
    throw new Error(
      `Powertools Tracer's ${PROVIDER} imports ${replaced.join(', ') || 'neither node:http nor node:https'}; update infra/node-http.ts`,
    );
  return code;
}

/**
 * The ESM entry of a copy of Powertools Tracer whose provider requires node:http and node:https
 * (infra/bundle-cache.ts). Fails if a release no longer imports them there as this expects.
 */
export function tracerForBundling(from: string = packageFolder('@aws-lambda-powertools/tracer')): string {
  const source = readFileSync(join(from, PROVIDER), 'utf8');
  const copy = transformedCopy({
    name: 'powertools-tracer',
    from,
    inputs: [source, readFileSync(fileURLToPath(import.meta.url), 'utf8')],
    change: (dir) => writeFileSync(join(dir, PROVIDER), tracerProvider(source)),
  });
  return join(copy, 'lib', 'esm', 'index.js');
}
