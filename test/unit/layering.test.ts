import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/** Every TypeScript file outside test/ and node_modules. */
const root = path.resolve(import.meta.dirname, '../..');
const SOURCE_DIRS = ['bin', 'functions', 'infra', 'shared', 'emulation', 'bench', 'scripts'];

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

const files = sourceFiles();

/**
 * The 300-line mark is a prompt to look, not a reason to split one concept over files: a source file
 * over it is printed as a warning (the run passes), so someone looks; a file that is one concept and
 * needs more is named below with the reason, and is not printed. The list must stay true: a named
 * file that is gone or back under the mark fails, so an entry cannot outlive its reason.
 */
const LINE_MARK = 300;
const LONG_ON_PURPOSE: Readonly<Record<string, string>> = {
  // 'shared/db/<entity>/repo.ts': 'why this file is one concept that needs more lines',
};

const lineCounts = files.map((f) => ({
  f,
  lines: readFileSync(path.join(root, f), 'utf8').replace(/\n$/, '').split('\n').length,
}));

/** Import rules are dependency-cruiser's job (test/lint/dependencies.test.ts); this one is not about imports. */
describe('file size', () => {
  it(`prints a warning for each source file outside test/ over ${LINE_MARK} lines that is not named as one concept`, () => {
    const long = lineCounts.filter(({ f, lines }) => lines > LINE_MARK && !(f in LONG_ON_PURPOSE));
    for (const { f, lines } of long)
      console.warn(`${f}: ${lines} lines, over the ${LINE_MARK}-line mark: one concept? (test/unit/layering.test.ts)`);
    expect(lineCounts.length).toBeGreaterThan(100);
  });

  it(`names in its exception list only files that exist and are over ${LINE_MARK} lines`, () => {
    const counted = new Map(lineCounts.map(({ f, lines }) => [f, lines]));
    const stale = Object.keys(LONG_ON_PURPOSE).filter((f) => (counted.get(f) ?? 0) <= LINE_MARK);
    expect(stale).toEqual([]);
  });
});
