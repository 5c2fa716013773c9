import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'acorn';

/**
 * The MCP SDK's ESM build as the Lambdas bundle it: a copy in which every schema of `types.js`
 * that no bundled code uses is dropped by esbuild instead of built at every cold start.
 *
 * The SDK builds its whole protocol in zod at import: 152 exported `const XSchema = z.object(…)`.
 * esbuild cannot tell that such a call only builds a value, so it keeps all of them, and the MCP
 * function built each one before its first request. The bundled server reaches 73 of them; the
 * rest cost ~10 ms of CPU at every cold start (`npm run bench`, section bundles). The copy marks
 * each of those initializers pure (wrapped in an arrow function called with `@__PURE__`, the
 * convention esbuild honours), so a schema nothing references is
 * left out of the bundle like an unused function. Nothing else changes: a schema that is used is
 * built exactly as before, at the same point of the module. What a dropped schema's construction
 * did besides return a value (zod's `describe` adds it to zod's global registry, which nothing of
 * ours reads) goes with it.
 *
 * infra/bundling.ts aliases `@modelcontextprotocol/sdk` to the copy for every bundle, so the
 * deploy, the bundle test and the bench build the same code. The copy lives under
 * node_modules/.cache, named by a hash of the SDK's types.js and of this file; the source tree's own
 * imports (the tests, the local server) use the SDK unchanged.
 */

/** How many initializers the SDK release we pin has (1.32.2: 154); far fewer means the file changed shape. */
const MIN_WRAPPED = 100;

/**
 * `source` (an ES module) with each top-level `const` whose initializer is a call or `new` wrapped
 * as `/* @__PURE__ *\/ (() => (…))()`. Literals, identifiers and functions are left as they are:
 * esbuild already drops those when unused.
 */
export function pureTopLevelCalls(source: string): { code: string; wrapped: number } {
  const program = parse(source, { ecmaVersion: 'latest', sourceType: 'module' });
  const edits: Array<{ at: number; text: string }> = [];
  for (const statement of program.body) {
    const declaration = statement.type === 'ExportNamedDeclaration' ? statement.declaration : statement;
    if (declaration?.type !== 'VariableDeclaration' || declaration.kind !== 'const') continue;
    for (const { init } of declaration.declarations) {
      if (init?.type !== 'CallExpression' && init?.type !== 'NewExpression') continue;
      edits.push({ at: init.start, text: '/* @__PURE__ */ (() => (' }, { at: init.end, text: '))()' });
    }
  }
  let code = source;
  for (const { at, text } of edits.sort((a, b) => b.at - a.at)) code = code.slice(0, at) + text + code.slice(at);
  return { code, wrapped: edits.length / 2 };
}

/**
 * The path of the copy of `from`, the SDK's `dist/esm` folder (made on first use, reused after). Written to a fresh folder and renamed
 * into place, so two builds at once (the tests synthesize in parallel) never see half a copy.
 */
export function mcpSdkForBundling(from: string): string {
  const types = readFileSync(join(from, 'types.js'), 'utf8');
  const transform = readFileSync(fileURLToPath(import.meta.url), 'utf8');
  const key = createHash('sha256').update(types).update(transform).digest('hex').slice(0, 16);
  const cache = fileURLToPath(new URL('../node_modules/.cache', import.meta.url));
  const target = join(cache, `mcp-sdk-esm-${key}`);
  if (existsSync(target)) return target;
  const { code, wrapped } = pureTopLevelCalls(types);
  if (wrapped < MIN_WRAPPED)
    throw new Error(
      `the MCP SDK's types.js has ${wrapped} top-level schema calls, expected ${MIN_WRAPPED}+; update infra/mcp-sdk.ts`,
    );
  mkdirSync(cache, { recursive: true });
  const staging = mkdtempSync(`${target}.tmp-`);
  cpSync(from, staging, { recursive: true, filter: (path) => !/\.(map|d\.ts)$/.test(path) });
  writeFileSync(join(staging, 'types.js'), code);
  try {
    renameSync(staging, target);
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(target)) throw err;
  }
  return target;
}
