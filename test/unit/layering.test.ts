import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The layering the code relies on, checked on the source text: every static, type-only and
 * dynamic import of every TypeScript file outside test/ and node_modules.
 */
const root = path.resolve(import.meta.dirname, '../..');
const SOURCE_DIRS = ['bin', 'functions', 'infra', 'shared', 'emulation', 'bench'];

function sourceFiles(): string[] {
  return SOURCE_DIRS.flatMap((dir) => {
    let entries: string[];
    try {
      entries = readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' });
    } catch {
      return [];
    }
    return entries.filter((f) => f.endsWith('.ts') && !f.includes('node_modules')).map((f) => path.join(dir, f));
  });
}

/** Repository-relative paths of the files `file` imports by a relative specifier. */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(root, file), 'utf8');
  const specifiers = [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
  return specifiers.filter((s) => s.startsWith('.')).map((s) => path.relative(root, path.resolve(root, path.dirname(file), s)));
}

const files = sourceFiles();
const under = (dir: string) => (f: string) => f.startsWith(dir + path.sep);

/** [files under `from`, and what they import under `to`] for every import that crosses the rule. */
function crossings(from: string, to: string[]): string[] {
  return files.filter(under(from)).flatMap((f) => importsOf(f).filter((i) => to.some((t) => under(t)(i))).map((i) => `${f} → ${i}`));
}

describe('layering (issue 8)', () => {
  it('finds the source files and their imports (the scan itself works)', () => {
    expect(files).toContain(path.join('shared', 'db', 'order.repo.ts'));
    expect(importsOf(path.join('shared', 'db', 'order.repo.ts'))).toContain(path.join('shared', 'domain', 'errors.ts'));
    expect(crossings('shared/db', ['shared/domain'])).not.toEqual([]);
  });

  it('shared/db imports nothing from shared/http', () => {
    expect(crossings('shared/db', ['shared/http'])).toEqual([]);
  });

  it('shared/domain imports nothing from shared/db or shared/http', () => {
    expect(crossings('shared/domain', ['shared/db', 'shared/http'])).toEqual([]);
  });

  it('infra imports nothing from emulation/local', () => {
    expect(crossings('infra', ['emulation/local'])).toEqual([]);
  });

  it('the admin console is a tool: nothing imports it but the admin CLI, and it imports no emulator', () => {
    const users = files.filter((f) => !under('bin/console')(f) && f !== path.join('bin', 'admin.ts')).flatMap((f) => importsOf(f).filter(under('bin/console')));
    expect(users).toEqual([]);
    expect(crossings('bin/console', ['emulation', 'infra'])).toEqual([]);
  });

  it('no source file outside test/ is over 300 lines', () => {
    const long = files
      .map((f) => ({ f, lines: readFileSync(path.join(root, f), 'utf8').replace(/\n$/, '').split('\n').length }))
      .filter(({ lines }) => lines > 300)
      .map(({ f, lines }) => `${f}: ${lines}`);
    expect(long).toEqual([]);
  });
});
