import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AnyNode, parse } from 'acorn';
import { packageFolder, transformedCopy } from './bundle-cache.ts';

/**
 * The official MCP SDK's v2 packages as the Lambdas bundle them: copies in which the protocol
 * schemas are built at their first use instead of at import (and those no bundled code references
 * could be left out; 2.4.0's server references every one, so the copies save time, not bytes).
 *
 * `@modelcontextprotocol/server` builds its per-revision wire schemas lazily already, but the
 * neutral protocol schemas it shares with the client (`@modelcontextprotocol/core`, the
 * `schemas-*.mjs` and `auth-*.mjs` chunks: 180 exported `const XSchema = z.object(…)`) are built
 * at import, and the server's elicitation module reads five of them at import to derive three
 * constants. esbuild cannot tell that such a call only builds a value, so it kept all of them, and
 * the MCP function built each one before its first request, most of them for methods this server
 * never handles (sampling, elicitation, roots, prompts, resources, OAuth). In the copies:
 *
 * - each schema built from zod (`z.…`, or a method of such a schema: `.extend`, `.merge`, …)
 *   becomes `/* @__PURE__ *\/ __lazySchema(() => (…))`: a stand-in that builds the schema the first
 *   time anything reads from it (parsing with it, extending it, putting it in a union that reads
 *   it), then forwards every read to it. A schema no request needs is never built;
 * - any other top-level call is wrapped as `/* @__PURE__ *\/ (() => (…))()`: built where it was;
 * - either way esbuild may drop what nothing references, like an unused function;
 * - in the server's chunks, a top-level constant computed from those schemas (`new Set(…)` of a
 *   schema's keys) becomes `__lazyValue(() => (…))`, the same stand-in with the value's methods
 *   bound to it (a Set's `has` needs the Set itself as receiver), so reading it is what builds it.
 *
 * What the stand-in forwards: every property read (with the schema as receiver, so zod's own
 * methods and getters bind to the schema), `in`, keys, descriptors, writes and the prototype, so
 * zod's `instanceof` checks (which read `_zod.traits`) hold. It is one stand-in per schema, so
 * identity within the module holds too. What a schema's construction did besides return a value
 * (zod's `describe` adds it to zod's global registry, which nothing of ours reads) happens when it
 * is built, or never.
 *
 * infra/bundling.ts aliases the server's and core's entries to the copies for every bundle, so the
 * deploy, the bundle test, the rehearsal (whose MCP tests run the bundle) and the bench build the
 * same code. The copies live under node_modules/.cache, named by a hash of the files they change
 * and of this file; the source tree's own imports (the tests, the local server) use the SDK
 * unchanged. What they buy: `npm run bench` (bundles), and the figures beside the aliases.
 */

/** How many schemas the core release we pin builds at import (2.4.0: 180, all built from zod); far fewer means its chunks changed shape. */
const MIN_DEFERRED = 100;
/** How many constants the server release we pin derives from those schemas at import (2.4.0: 3); none means its chunks changed shape. */
const MIN_DERIVED = 1;

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

/** The stand-in for a value derived from schemas: as above, with its methods bound to the value (Set and Map methods check their receiver). */
const LAZY_VALUE = `
function __lazyValue(build) {
  let value;
  const built = () => (value ??= build());
  return new Proxy({}, {
    get: (_, key) => {
      const member = Reflect.get(built(), key);
      return typeof member === 'function' ? member.bind(built()) : member;
    },
    has: (_, key) => Reflect.has(built(), key),
    ownKeys: () => Reflect.ownKeys(built()),
    getOwnPropertyDescriptor: (_, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(built(), key);
      if (descriptor) descriptor.configurable = true;
      return descriptor;
    },
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
  const code = applyEdits(source, edits);
  return { code: lazy > 0 ? code + LAZY_SCHEMA : code, lazy, pure };
}

/**
 * `source` (an ES module) with each top-level `const` that is computed, by a call, from a name
 * imported from `from` (a module of schemas) built at its first read instead of at import, as
 * described above. Functions, classes and literals are left as they are.
 */
export function deferSchemaReads(source: string, from: string): { code: string; lazy: number } {
  const program = parse(source, { ecmaVersion: 'latest', sourceType: 'module' });
  const imported = new Set<string>();
  for (const statement of program.body)
    if (statement.type === 'ImportDeclaration' && statement.source.value === from)
      for (const specifier of statement.specifiers) imported.add(specifier.local.name);
  const edits: Array<{ at: number; text: string }> = [];
  for (const statement of program.body) {
    const declaration = statement.type === 'ExportNamedDeclaration' ? statement.declaration : statement;
    if (declaration?.type !== 'VariableDeclaration' || declaration.kind !== 'const') continue;
    for (const { init } of declaration.declarations) {
      if (!init || !/^(CallExpression|NewExpression|ObjectExpression|ArrayExpression)$/.test(init.type)) continue;
      let calls = false;
      let reads = false;
      walk(init, (node) => {
        if (node.type === 'CallExpression' || node.type === 'NewExpression') calls = true;
        else if (node.type === 'Identifier' && imported.has(node.name)) reads = true;
        // A function inside runs later, when called: what it reads is not read at import.
        return !/Function|Arrow/.test(node.type);
      });
      if (calls && reads)
        edits.push({ at: init.start, text: '/* @__PURE__ */ __lazyValue(() => (' }, { at: init.end, text: '))' });
    }
  }
  const lazy = edits.length / 2;
  return { code: lazy > 0 ? applyEdits(source, edits) + LAZY_VALUE : source, lazy };
}

/** `source` with each text inserted at its offset (offsets into the original source). */
function applyEdits(source: string, edits: Array<{ at: number; text: string }>): string {
  let code = source;
  for (const { at, text } of edits.sort((a, b) => b.at - a.at)) code = code.slice(0, at) + text + code.slice(at);
  return code;
}

/** Calls `visit` on `node` and, while it answers true, on every node below it. */
function walk(node: AnyNode, visit: (node: AnyNode) => boolean): void {
  if (!visit(node)) return;
  for (const value of Object.values(node))
    for (const child of Array.isArray(value) ? value : [value])
      if (child !== null && typeof child === 'object' && typeof (child as AnyNode).type === 'string')
        walk(child as AnyNode, visit);
}

const CORE_SCHEMAS = '@modelcontextprotocol/core/internal';

/**
 * The copy of `pkg`'s dist folder with each chunk rewritten by `rewrite` (which answers the code and
 * how many constants it deferred), and the path of `entry` in the copy. Fewer than `min` deferred
 * in all means the release's chunks changed shape: `changed` says how, and the build stops.
 */
function deferredCopy(options: {
  pkg: string;
  name: string;
  entry: string;
  rewrite: (source: string) => { code: string; lazy: number };
  min: number;
  changed: (deferred: number) => string;
}): string {
  const from = join(packageFolder(options.pkg), 'dist');
  const chunks = readdirSync(from).filter((file) => file.endsWith('.mjs'));
  const copy = transformedCopy({
    name: options.name,
    from,
    inputs: [
      ...chunks.map((f) => readFileSync(join(from, f), 'utf8')),
      readFileSync(fileURLToPath(import.meta.url), 'utf8'),
    ],
    change: (dir) => {
      let deferred = 0;
      for (const file of chunks) {
        const { code, lazy } = options.rewrite(readFileSync(join(dir, file), 'utf8'));
        if (lazy === 0) continue;
        writeFileSync(join(dir, file), code);
        deferred += lazy;
      }
      if (deferred < options.min) throw new Error(`${options.changed(deferred)}; update infra/mcp-sdk.ts`);
    },
  });
  return join(copy, options.entry);
}

/**
 * The copy of `@modelcontextprotocol/core`'s dist folder with its schema chunks deferred, and the
 * path of its `internal` entry (what the server imports) in the copy.
 */
export const mcpCoreForBundling = (): string =>
  deferredCopy({
    pkg: '@modelcontextprotocol/core',
    name: 'mcp-core',
    entry: 'internal.mjs',
    rewrite: deferTopLevelCalls,
    min: MIN_DEFERRED,
    changed: (n) => `@modelcontextprotocol/core builds ${n} top-level schemas from zod, expected ${MIN_DEFERRED}+`,
  });

/**
 * The copy of `@modelcontextprotocol/server`'s dist folder with the constants its chunks derive
 * from core's schemas at import deferred, and the path of its entry in the copy.
 */
export const mcpServerForBundling = (): string =>
  deferredCopy({
    pkg: '@modelcontextprotocol/server',
    name: 'mcp-server',
    entry: 'index.mjs',
    rewrite: (source) => deferSchemaReads(source, CORE_SCHEMAS),
    min: MIN_DERIVED,
    changed: () => "@modelcontextprotocol/server derives no constant from core's schemas at import any more",
  });
