import { transform } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { pureTopLevelCalls } from '#infra/mcp-sdk.ts';

/** The MCP SDK's types.js in miniature: schemas built by calls at the top level, some used, some not. */
const SOURCE = `import * as z from 'zod/v4';
export const LATEST = '2025-06-18';
export const BaseSchema = z.object({ id: z.string().describe('the id') });
const UsedSchema = BaseSchema.extend({ method: z.literal('used') }).strict();
const UnusedSchema = BaseSchema.extend({ method: z.literal('never/used') });
export const Registry = new Map([['a', 1]]);
export const isUsed = (v) => UsedSchema.safeParse(v).success;
export const Alias = UsedSchema;
let counter = f();
export function f() { const inner = g(); return inner; }
`;

describe('pureTopLevelCalls (infra/mcp-sdk.ts)', () => {
  it('marks each top-level const built by a call or `new` as pure, and nothing else', () => {
    const { code, wrapped } = pureTopLevelCalls(SOURCE);
    expect(wrapped).toBe(4);
    expect(code).toContain(
      "export const BaseSchema = /* @__PURE__ */ (() => (z.object({ id: z.string().describe('the id') })))();",
    );
    expect(code).toContain(
      "const UnusedSchema = /* @__PURE__ */ (() => (BaseSchema.extend({ method: z.literal('never/used') })))();",
    );
    expect(code).toContain("export const Registry = /* @__PURE__ */ (() => (new Map([['a', 1]])))();");
    // Literals, functions and aliases are already dropped when unused; `let` and inner consts are not ours to judge.
    expect(code).toContain("export const LATEST = '2025-06-18';");
    expect(code).toContain('export const isUsed = (v) => UsedSchema.safeParse(v).success;');
    expect(code).toContain('export const Alias = UsedSchema;');
    expect(code).toContain('let counter = f();');
    expect(code).toContain('const inner = g();');
  });

  it('lets esbuild drop a schema nothing uses, and keeps the ones something does', async () => {
    // Not a module's exports (those count as used): the same declarations, one of them read.
    const body = pureTopLevelCalls(SOURCE.replaceAll('export ', '').replace('let counter = f();\n', '')).code;
    const shaken = (
      await transform(`${body}\nconsole.log(isUsed({ id: 'x', method: 'used' }));`, {
        treeShaking: true,
        format: 'esm',
      })
    ).code;
    expect(shaken).not.toContain('never/used');
    expect(shaken).not.toContain('Registry');
    expect(shaken).toContain('z.literal("used")');
    expect(shaken).toContain('the id');
  });

  it('keeps the module valid and its order: every initializer runs where it did', () => {
    const { code } = pureTopLevelCalls('const a = f(1);\nconst b = g(a, 2);\n');
    expect(code).toBe('const a = /* @__PURE__ */ (() => (f(1)))();\nconst b = /* @__PURE__ */ (() => (g(a, 2)))();\n');
  });
});
