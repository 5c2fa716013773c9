import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The repository explains itself: code and docs cite this repository's docs (`docs/contract.md#idempotency`),
 * never a document a maintainer does not have (the customer's specification or an outside contract,
 * by section number), every cited anchor is a heading of the page it names, and every repository path a doc
 * names (`shared/db/keys.ts`, `docs/webhooks.md`, `test/integration/`) exists.
 */
const root = path.resolve(import.meta.dirname, '../..');
const DIRS = ['bin', 'bench', 'docs', 'emulation', 'functions', 'infra', 'scripts', 'shared', 'test'];
const ROOT_FILES = ['README.md', 'package.json', '.dependency-cruiser.cjs'];
const TEXT = /\.(ts|mts|cts|mjs|cjs|js|md|json|ya?ml)$/;
// Spelt in two halves, so that this file does not match itself.
const OUTSIDE_CITATION = new RegExp(['CONTRACT', 'SPEC'].map((d) => `${d} ${'§'}`).join('|'));

function files(): string[] {
  const found = ROOT_FILES.filter((f) => TEXT.test(f));
  for (const dir of DIRS) {
    for (const f of readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })) {
      if (!f.includes('node_modules') && TEXT.test(f)) found.push(path.join(dir, f));
    }
  }
  return found;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, each space a hyphen. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

function anchorsOf(doc: string): Set<string> {
  const text = readFileSync(path.join(root, 'docs', doc), 'utf8');
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slug(m[1]!)));
}

const all = files();
const read = (f: string) => readFileSync(path.join(root, f), 'utf8');

describe('docs that stand alone', () => {
  it('finds the files it checks', () => {
    expect(all).toContain(path.join('shared', 'db', 'order', 'repo.ts'));
    expect(all).toContain(path.join('docs', 'contract.md'));
  });

  it('no file cites an outside document by section number', () => {
    const found = all.flatMap((f) =>
      read(f)
        .split('\n')
        .flatMap((line, i) => (OUTSIDE_CITATION.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });

  it('every cited docs/<page>.md#anchor is a heading of that page', () => {
    const pages = new Map<string, Set<string>>();
    const broken: string[] = [];
    let checked = 0;
    for (const f of all) {
      const text = read(f);
      const inDocs = f.startsWith('docs' + path.sep);
      const cites = [
        ...[...text.matchAll(/docs\/([\w-]+\.md)#([\w-]+)/g)].map((m) => [m[1]!, m[2]!] as const),
        // Relative links between the pages of docs/: [text](orders.md#idempotency).
        ...(inDocs ? [...text.matchAll(/\]\(([\w-]+\.md)#([\w-]+)\)/g)].map((m) => [m[1]!, m[2]!] as const) : []),
      ];
      for (const [page, anchor] of cites) {
        checked++;
        if (!pages.has(page)) {
          try {
            pages.set(page, anchorsOf(page));
          } catch {
            pages.set(page, new Set());
          }
        }
        if (!pages.get(page)!.has(anchor)) broken.push(`${f}: docs/${page}#${anchor}`);
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect([...new Set(broken)]).toEqual([]);
  });

  it('README.md\'s table "Where the rest is" links every page of docs/', () => {
    const section = /^## Where the rest is\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(read('README.md'))?.[1] ?? '';
    const linked = new Set([...section.matchAll(/\]\((docs\/[\w-]+\.md)\)/g)].map((m) => m[1]));
    const pages = readdirSync(path.join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`);
    expect(pages.length).toBeGreaterThan(10);
    expect(pages.filter((p) => !linked.has(p))).toEqual([]);
  });

  it('every repository path README.md and docs/ name exists', () => {
    const docs = all.filter((f) => f === 'README.md' || (f.startsWith('docs' + path.sep) && f.endsWith('.md')));
    // A path starts at a top-level folder (not inside a URL, an alias or another word) and ends before
    // a placeholder (`functions/<group>/`) or a glob, so only what it spells out is checked.
    const PATH = /(?<![\w./#@-])((?:infra|shared|functions|test|bin|docs|emulation|bench|scripts)\/[\w./-]*)/g;
    const missing: string[] = [];
    let checked = 0;
    for (const f of docs) {
      for (const [line, text] of read(f).split('\n').entries()) {
        for (const m of text.matchAll(PATH)) {
          const named = m[1]!.replace(/[.]+$/, '');
          if (text[m.index! + m[1]!.length] === '*') continue;
          checked++;
          if (!existsSync(path.join(root, named))) missing.push(`${f}:${line + 1}: ${named}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(200);
    expect(missing).toEqual([]);
  });
});
