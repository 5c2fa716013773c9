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

/** Import rules are dependency-cruiser's job (test/lint/dependencies.test.ts); this one is not about imports. */
describe('file size', () => {
  it('no source file outside test/ is over 300 lines', () => {
    const long = files
      .map((f) => ({ f, lines: readFileSync(path.join(root, f), 'utf8').replace(/\n$/, '').split('\n').length }))
      .filter(({ lines }) => lines > 300)
      .map(({ f, lines }) => `${f}: ${lines}`);
    expect(long).toEqual([]);
  });
});
