import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { transform } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import { deferSchemaReads, deferTopLevelCalls } from '#infra/mcp-sdk.ts';

/**
 * A schema module of the MCP SDK in miniature (core's schemas chunk): schemas built by calls at the top level, some used, some
 * not, and calls that build something else. `built` records each schema as it is built.
 */
const SOURCE = `import * as z from 'zod/v4';
export const LATEST = '2025-06-18';
export const BaseSchema = z.object({ id: z.string() }).describe(built('Base'));
export const UsedSchema = BaseSchema.extend({ method: z.literal('used') }).strict().describe(built('Used'));
export const UnusedSchema = BaseSchema.extend({ method: z.literal('never/used') }).describe(built('Unused'));
export const OtherSchema = z.object({ method: z.literal('other'), n: z.number().int() }).describe(built('Other'));
export const EitherSchema = z.discriminatedUnion('method', [UsedSchema, OtherSchema]).describe(built('Either'));
export const Registry = new Map([['a', 1]]);
export const Counter = makeCounter();
export const isUsed = (v) => UsedSchema.safeParse(v).success;
export const Alias = UsedSchema;
let counter = f();
export function f() { const inner = g(); return inner; }
function g() { return 1; }
function makeCounter() { return { n: 0 }; }
function built(name) { (globalThis.__built ??= []).push(name); return name; }
`;

const scratch = (() => {
  mkdirSync(resolve('node_modules/.cache'), { recursive: true });
  return mkdtempSync(resolve('node_modules/.cache/mcp-sdk-transform-'));
})();
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('deferTopLevelCalls (infra/mcp-sdk.ts)', () => {
  it('defers each top-level schema built from zod, marks other top-level calls pure, and leaves the rest', () => {
    const { code, lazy, pure } = deferTopLevelCalls(SOURCE);
    expect({ lazy, pure }).toEqual({ lazy: 5, pure: 2 });
    expect(code).toContain(
      "export const BaseSchema = /* @__PURE__ */ __lazySchema(() => (z.object({ id: z.string() }).describe(built('Base'))));",
    );
    // Built from another schema, so a schema too.
    expect(code).toContain(
      "export const UsedSchema = /* @__PURE__ */ __lazySchema(() => (BaseSchema.extend({ method: z.literal('used') }).strict().describe(built('Used'))));",
    );
    // Not built from zod: built where it was, and dropped if unused.
    expect(code).toContain("export const Registry = /* @__PURE__ */ (() => (new Map([['a', 1]])))();");
    expect(code).toContain('export const Counter = /* @__PURE__ */ (() => (makeCounter()))();');
    // Literals, functions and aliases are already dropped when unused; `let` and inner consts are not ours to judge.
    expect(code).toContain("export const LATEST = '2025-06-18';");
    expect(code).toContain('export const isUsed = (v) => UsedSchema.safeParse(v).success;');
    expect(code).toContain('export const Alias = UsedSchema;');
    expect(code).toContain('let counter = f();');
    expect(code).toContain('const inner = g();');
    expect(code).toContain('function __lazySchema(build)');
  });

  it('lets esbuild drop a schema nothing uses, and keeps the ones something does', async () => {
    // Not a module's exports (those count as used): the same declarations, one of them read.
    const body = deferTopLevelCalls(SOURCE.replaceAll('export ', '').replace('let counter = f();\n', '')).code;
    const shaken = (
      await transform(`${body}\nconsole.log(isUsed({ id: 'x', method: 'used' }));`, {
        treeShaking: true,
        format: 'esm',
      })
    ).code;
    expect(shaken).not.toContain('never/used');
    expect(shaken).not.toContain('Registry');
    expect(shaken).not.toContain('makeCounter');
    expect(shaken).toContain('z.literal("used")');
    expect(shaken).toContain('__lazySchema');
  });

  it('builds a schema at its first use, once, and it then behaves as the schema itself (real zod)', async () => {
    const file = join(scratch, 'types.mjs');
    writeFileSync(file, deferTopLevelCalls(SOURCE).code);
    const globals = globalThis as { __built?: string[] };
    globals.__built = [];
    const m = await import(pathToFileURL(file).href);
    // Nothing is built at import; the other calls run where they were.
    expect(globals.__built).toEqual([]);
    expect(m.Registry.get('a')).toBe(1);
    expect(m.Counter).toEqual({ n: 0 });

    expect(m.UsedSchema.parse({ id: 'x', method: 'used' })).toEqual({ id: 'x', method: 'used' });
    expect(globals.__built).toEqual(['Base', 'Used']);
    expect(m.isUsed({ id: 'x', method: 'used', extra: 1 })).toBe(false); // .strict() holds
    expect(m.UsedSchema.safeParse({ id: 1, method: 'used' }).error.issues[0]).toMatchObject({ path: ['id'] });
    expect(globals.__built).toEqual(['Base', 'Used']); // built once

    // Identity, zod's instanceof, shape and composition go through to the schema.
    expect(m.Alias).toBe(m.UsedSchema);
    expect(m.UsedSchema instanceof z.ZodObject).toBe(true);
    expect(m.UsedSchema instanceof z.ZodString).toBe(false);
    expect(Object.keys(m.UsedSchema.shape)).toEqual(['id', 'method']);
    expect(m.UsedSchema.shape.method.value).toBe('used');
    expect(m.UsedSchema.description).toBe('Used');
    const outer = z.object({ inner: m.UsedSchema, list: z.array(m.BaseSchema) });
    expect(outer.safeParse({ inner: { id: 'a', method: 'used' }, list: [{ id: 'b' }] }).success).toBe(true);
    expect(outer.safeParse({ inner: { id: 'a', method: 'nope' }, list: [] }).error?.issues[0]?.path).toEqual([
      'inner',
      'method',
    ]);
    const optional = m.UsedSchema.optional();
    expect(optional.parse(undefined)).toBeUndefined();

    // A union reads its options when it is built, and picks by the discriminator.
    expect(m.EitherSchema.parse({ method: 'other', n: 3 })).toEqual({ method: 'other', n: 3 });
    expect(m.EitherSchema.safeParse({ method: 'other', n: 1.5 }).success).toBe(false);
    expect(globals.__built).toEqual(['Base', 'Used', 'Other', 'Either']);
    // What nothing used was never built.
    expect(globals.__built).not.toContain('Unused');
  });
});

/**
 * The server's chunks in miniature: constants derived at import from schemas a module of schemas
 * exports (which that module builds at their first use), and code that reads them later.
 */
const SCHEMAS = `import * as z from 'zod/v4';
export const FormSchema = z.object({ requested: z.object({ a: z.string(), b: z.number() }) }).describe(built('Form'));
export const StringSchema = z.object({ format: z.enum(['email', 'uri']).optional() }).describe(built('String'));
function built(name) { (globalThis.__built ??= []).push(name); return name; }
`;
const SERVER = `import { FormSchema, StringSchema } from './schemas.mjs';
const keysOf = (schema) => new Set(Object.keys(schema.shape));
const ROOT_KEYS = new Set(['$schema', ...Object.keys(FormSchema.shape.requested.shape)]);
const BY_TYPE = { string: keysOf(StringSchema) };
const FORMATS = new Set(StringSchema.shape.format.unwrap().options);
const LIMIT = Math.max(1, 2);
const SCHEMAS = [FormSchema, StringSchema];
export const allowed = (key) => ROOT_KEYS.has(key);
export const typeKeys = (type) => (Object.hasOwn(BY_TYPE, type) ? [...BY_TYPE[type]] : undefined);
export const formats = () => [...FORMATS];
export { LIMIT, SCHEMAS };
`;

describe('deferSchemaReads (infra/mcp-sdk.ts)', () => {
  it('defers the constants computed from imported schemas and leaves the rest', () => {
    const { code, lazy } = deferSchemaReads(SERVER, './schemas.mjs');
    expect(lazy).toBe(3);
    expect(code).toContain(
      "const ROOT_KEYS = /* @__PURE__ */ __lazyValue(() => (new Set(['$schema', ...Object.keys(FormSchema.shape.requested.shape)])));",
    );
    expect(code).toContain('const BY_TYPE = /* @__PURE__ */ __lazyValue(() => ({ string: keysOf(StringSchema) }));');
    // No schema in it, or no call: nothing is read at import.
    expect(code).toContain('const LIMIT = Math.max(1, 2);');
    expect(code).toContain('const SCHEMAS = [FormSchema, StringSchema];');
    expect(code).toContain('const keysOf = (schema) => new Set(Object.keys(schema.shape));');
  });

  it('builds no schema at import, and the constants then behave as the values (Set methods included)', async () => {
    const dir = mkdtempSync(join(scratch, 'reads-'));
    writeFileSync(join(dir, 'schemas.mjs'), deferTopLevelCalls(SCHEMAS).code);
    writeFileSync(join(dir, 'server.mjs'), deferSchemaReads(SERVER, './schemas.mjs').code);
    const globals = globalThis as { __built?: string[] };
    globals.__built = [];
    const m = await import(pathToFileURL(join(dir, 'server.mjs')).href);
    expect(globals.__built).toEqual([]);
    expect(m.LIMIT).toBe(2);
    expect(m.allowed('a')).toBe(true);
    expect(m.allowed('$schema')).toBe(true);
    expect(m.allowed('c')).toBe(false);
    expect(globals.__built).toEqual(['Form']);
    expect(m.typeKeys('string')).toEqual(['format']);
    expect(m.typeKeys('number')).toBeUndefined();
    expect(m.formats()).toEqual(['email', 'uri']);
    expect(globals.__built).toEqual(['Form', 'String']);
  });
});
