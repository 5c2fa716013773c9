/**
 * Codemod: a relative import that leaves its part of the code (`../../shared/db/core/client.ts` from a
 * handler) becomes the part's package import (`#db/core/client.ts`); an import inside the part stays
 * relative. The parts and their aliases are package.json's `imports`; docs/architecture.md says why.
 *
 *   npx tsx scripts/rewrite-imports.ts           rewrite in place, list the files changed
 *   npx tsx scripts/rewrite-imports.ts --check   change nothing; exit 1 if a file would change
 *
 * Deterministic and idempotent: only relative specifiers are rewritten, each to the one alias whose
 * folder holds its target, so a second run changes nothing. Specifiers are found by the TypeScript
 * parser (static, type-only, re-export, side-effect and dynamic `import('…')` with a literal),
 * never by a regular expression over the text, and only the specifier's characters are replaced.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const root = path.resolve(import.meta.dirname, '..');

/** `#name/*` → folder, from package.json; the longest folder that holds a file wins. */
function aliases(): { alias: string; dir: string }[] {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { imports?: Record<string, string> };
  return Object.entries(pkg.imports ?? {})
    .filter(([key, target]) => key.endsWith('/*') && target.startsWith('./') && target.endsWith('/*'))
    .map(([key, target]) => ({ alias: key.slice(0, -1), dir: target.slice(2, -1) }))
    .sort((a, b) => b.dir.length - a.dir.length || a.alias.localeCompare(b.alias));
}

/**
 * The part a file belongs to: its alias's folder, except that each function group and each
 * emulator is a part of its own (one Lambda bundle, one emulator), so `../catalog/handler.ts` from
 * functions/mcp becomes `#functions/catalog/handler.ts` while `./routes/x.ts` stays.
 */
const SPLIT_BY_SUBFOLDER = new Set(['functions/', 'emulation/']);

function partOf(
  file: string,
  table: { alias: string; dir: string }[],
): { alias: string; dir: string; part: string } | undefined {
  const hit = table.find(({ dir }) => file.startsWith(dir));
  if (!hit) return undefined;
  const rest = file.slice(hit.dir.length);
  const sub = SPLIT_BY_SUBFOLDER.has(hit.dir) && rest.includes('/') ? `${rest.split('/')[0]}/` : '';
  return { ...hit, part: hit.dir + sub };
}

function specifiers(source: ts.SourceFile): ts.StringLiteralLike[] {
  const found: ts.StringLiteralLike[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteralLike(arg)) found.push(arg);
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      found.push(node.argument.literal);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The new text of one file, or undefined when nothing changes. */
function rewrite(file: string, text: string, table = aliases()): string | undefined {
  const from = partOf(file, table);
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const edits: { start: number; end: number; value: string }[] = [];
  for (const literal of specifiers(source)) {
    const spec = literal.text;
    if (!spec.startsWith('../')) continue;
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
    const to = partOf(target, table);
    if (!to || (from && from.part === to.part)) continue;
    const value = to.alias + target.slice(to.dir.length);
    const quote = text[literal.getStart(source)];
    edits.push({ start: literal.getStart(source), end: literal.getEnd(), value: `${quote}${value}${quote}` });
  }
  if (edits.length === 0) return undefined;
  let out = text;
  for (const edit of edits.sort((a, b) => b.start - a.start))
    out = out.slice(0, edit.start) + edit.value + out.slice(edit.end);
  return out;
}

/** Every TypeScript file of the repository, relative and sorted. */
function sourceFiles(): string[] {
  return ts.sys
    .readDirectory(root, ['.ts', '.mts', '.cts'], ['node_modules', 'cdk.out', '.data', '.rehearsal', 'docs'], ['**/*'])
    .map((f) => path.relative(root, f).split(path.sep).join('/'))
    .filter((f) => !f.startsWith('node_modules/') && !f.endsWith('.d.ts'))
    .sort();
}

function main(): void {
  const check = process.argv.includes('--check');
  const table = aliases();
  if (table.length === 0) throw new Error('package.json has no "imports" with "#name/*": "./folder/*" entries');
  const files = sourceFiles();
  const changed: string[] = [];
  for (const file of files) {
    const text = readFileSync(path.join(root, file), 'utf8');
    const next = rewrite(file, text, table);
    if (next === undefined) continue;
    changed.push(file);
    if (!check) writeFileSync(path.join(root, file), next);
  }
  for (const file of changed) console.log(file);
  console.error(`${check ? 'would rewrite' : 'rewrote'} ${changed.length} of ${files.length} files`);
  if (check && changed.length > 0) process.exitCode = 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) main();
