import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AnyNode, parse } from 'acorn';
import { transformedCopy } from './bundle-cache.ts';

/**
 * The MCP SDK's ESM build as the Lambdas bundle it: a copy in which the protocol schemas of
 * `types.js` are built at their first use instead of at import, and those no bundled code
 * references are left out.
 *
 * The SDK builds its whole protocol in zod at import: 152 exported `const XSchema = z.object(…)`.
 * esbuild cannot tell that such a call only builds a value, so it kept all of them, and the MCP
 * function built each one before its first request, most of them for methods this server never
 * handles (sampling, elicitation, roots, prompts, resources). In the copy:
 *
 * - each schema built from zod (`z.…`, or a method of such a schema: `.extend`, `.merge`, …)
 *   becomes `/* @__PURE__ *\/ __lazySchema(() => (…))`: a stand-in that builds the schema the first
 *   time anything reads from it (parsing with it, extending it, putting it in a union that reads
 *   it), then forwards every read to it. A schema no request needs is never built;
 * - any other top-level call is wrapped as `/* @__PURE__ *\/ (() => (…))()`: built where it was;
 * - either way esbuild may drop what nothing references, like an unused function.
 *
 * What the stand-in forwards: every property read (with the schema as receiver, so zod's own
 * methods and getters bind to the schema), `in`, keys, descriptors, writes and the prototype, so
 * zod's `instanceof` checks (which read `_zod.traits`) hold. It is one stand-in per schema, so
 * identity within the module holds too. What a schema's construction did besides return a value
 * (zod's `describe` adds it to zod's global registry, which nothing of ours reads) happens when it
 * is built, or never.
 *
 * infra/bundling.ts aliases `@modelcontextprotocol/sdk` to the copy for every bundle, so the
 * deploy, the bundle test, the rehearsal (whose MCP tests run the bundle) and the bench build the
 * same code. The copy lives under node_modules/.cache, named by a hash of the SDK's types.js and of
 * this file; the source tree's own imports (the tests, the local server) use the SDK unchanged.
 */

/** How many initializers the SDK release we pin has (1.32.2: 154, all built from zod); far fewer means the file changed shape. */
const MIN_DEFERRED = 100;

/** The stand-in (see above), appended to the transformed module; a function declaration, so it is there before the first schema. */
const LAZY_SCHEMA = `
function __lazySchema(build) {
  let schema;
  const built = () => (schema ??= build());
  return new Proxy({}, {
    get: (_, key) => Reflect.get(built(), key),
    set: (_, key, value) => Reflect.set(built(), key, value),
    has: (_, key) => Reflect.has(built(), key),
    ownKeys: () => Reflect.ownKeys(built()),
    getOwnPropertyDescriptor: (_, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(built(), key);
      // A proxy may not report a property its (empty) target lacks as non-configurable.
      if (descriptor) descriptor.configurable = true;
      return descriptor;
    },
    defineProperty: (_, key, descriptor) => Reflect.defineProperty(built(), key, descriptor),
    deleteProperty: (_, key) => Reflect.deleteProperty(built(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(built()),
  });
}
`;

/** The identifier a call chain starts from: `z` for `z.string().refine(…)`, `A` for `A.extend(…).strict()`. */
function rootOf(node: AnyNode): string | undefined {
  let at = node;
  for (;;) {
    if (at.type === 'Identifier') return at.name;
    if (at.type === 'CallExpression' || at.type === 'NewExpression') at = at.callee;
    else if (at.type === 'MemberExpression') at = at.object;
    else return undefined;
  }
}

/**
 * `source` (an ES module) with its top-level `const` schemas built lazily and its other top-level
 * `const` calls marked pure, as described above. Literals, identifiers and functions are left as
 * they are: esbuild already drops those when unused.
 */
export function deferTopLevelCalls(source: string): { code: string; lazy: number; pure: number } {
  const program = parse(source, { ecmaVersion: 'latest', sourceType: 'module' });
  // What a schema is built from: zod's namespace, then each schema the module declares.
  const schemas = new Set<string>();
  for (const statement of program.body)
    if (statement.type === 'ImportDeclaration' && String(statement.source.value).startsWith('zod'))
      for (const specifier of statement.specifiers)
        if (specifier.type === 'ImportNamespaceSpecifier') schemas.add(specifier.local.name);
  const edits: Array<{ at: number; text: string }> = [];
  let lazy = 0;
  let pure = 0;
  for (const statement of program.body) {
    const declaration = statement.type === 'ExportNamedDeclaration' ? statement.declaration : statement;
    if (declaration?.type !== 'VariableDeclaration' || declaration.kind !== 'const') continue;
    for (const { id, init } of declaration.declarations) {
      if (init?.type !== 'CallExpression' && init?.type !== 'NewExpression') continue;
      const root = rootOf(init);
      if (init.type === 'CallExpression' && root !== undefined && schemas.has(root) && id.type === 'Identifier') {
        edits.push({ at: init.start, text: '/* @__PURE__ */ __lazySchema(() => (' }, { at: init.end, text: '))' });
        schemas.add(id.name);
        lazy++;
      } else {
        edits.push({ at: init.start, text: '/* @__PURE__ */ (() => (' }, { at: init.end, text: '))()' });
        pure++;
      }
    }
  }
  let code = source;
  for (const { at, text } of edits.sort((a, b) => b.at - a.at)) code = code.slice(0, at) + text + code.slice(at);
  return { code: lazy > 0 ? code + LAZY_SCHEMA : code, lazy, pure };
}

/** The path of the copy of `from`, the SDK's `dist/esm` folder, with types.js transformed (infra/bundle-cache.ts). */
export function mcpSdkForBundling(from: string): string {
  const types = readFileSync(join(from, 'types.js'), 'utf8');
  return transformedCopy({
    name: 'mcp-sdk-esm',
    from,
    inputs: [types, readFileSync(fileURLToPath(import.meta.url), 'utf8')],
    change: (copy) => {
      const { code, lazy } = deferTopLevelCalls(types);
      if (lazy < MIN_DEFERRED)
        throw new Error(
          `the MCP SDK's types.js has ${lazy} top-level schemas built from zod, expected ${MIN_DEFERRED}+; update infra/mcp-sdk.ts`,
        );
      writeFileSync(join(copy, 'types.js'), code);
    },
  });
}
