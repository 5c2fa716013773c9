import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { isErrorCode } from '#domain/errors.ts';
import { isFault } from '#domain/outcome.ts';

/**
 * Ratchets on the way to one pipeline (parse → use case → outcome → present, docs/architecture.md
 * "The pipeline"): each counts what should go, per file, against today's figure as a ceiling. A
 * file over its ceiling, or a new file with any, fails; a file under it fails too, until its
 * ceiling is lowered here, so the ground gained is kept.
 */
const root = path.resolve(import.meta.dirname, '../..');
const SOURCE_DIRS = ['bin', 'functions', 'infra', 'shared', 'emulation', 'bench', 'scripts'];

function tsFiles(dirs: readonly string[]): string[] {
  return dirs.flatMap((dir) =>
    readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts') && !f.includes('node_modules'))
      .map((f) => path.posix.join(dir, f.split(path.sep).join('/'))),
  );
}

const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

/** Files with a count above 0, as `{file: count}`. */
function countsOf(files: readonly string[], count: (text: string) => number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const file of files) {
    const n = count(read(file));
    if (n > 0) counts[file] = n;
  }
  return counts;
}

/** What differs from the ceiling, as lines that say what to do. */
function overAndUnder(counts: Record<string, number>, ceiling: Record<string, number>, fix: string): string[] {
  const problems: string[] = [];
  for (const [file, n] of Object.entries(counts)) {
    const allowed = ceiling[file] ?? 0;
    if (n > allowed) problems.push(`${file}: ${n}, ceiling ${allowed}. ${fix}`);
  }
  for (const [file, allowed] of Object.entries(ceiling)) {
    const n = counts[file] ?? 0;
    if (n < allowed) problems.push(`${file}: ${n}, ceiling ${allowed}: lower its ceiling in ${RATCHETS} to ${n}.`);
  }
  return problems;
}

const RATCHETS = 'test/unit/pipeline-ratchets.test.ts';

// ---------------------------------------------------------------------------------------------
// 1. Outcomes a caller can cause are values, not exceptions (/work/shared/STYLE.md → docs/architecture.md).

/**
 * Counts the DomainErrors a file makes whose code a caller can cause (every code but the faults of
 * shared/domain/outcome.ts): `new DomainError('<code>', …)` with such a code or a code that is not a
 * literal. (shared/domain/errors.ts has no helper that makes one: a refusal is built with `refused`.)
 */
function callerErrorsIn(text: string): number {
  let n = 0;
  for (const m of text.matchAll(/new DomainError\(\s*(?:'([a-z_]+)'|([^'\s]))/g)) {
    const code = m[1];
    if (code === undefined || !isErrorCode(code) || !isFault(code)) n++;
  }
  return n;
}

/**
 * Where a caller's outcome is still thrown, with why: nowhere in the use cases' layers, and at the
 * surfaces' edges (the routes, the MCP tools and transport, the admin commands, shared/http) only
 * where a throw is the one way to the presenter.
 */
const CALLER_ERRORS_CEILING: Readonly<Record<string, number>> = {
  // `checking`: the chain's checks (the route, the key, the body) answer values, and this adapter
  // throws theirs, because a middy `before` step reaches the error handler only by a throw (an
  // early answer skips responseShaper's `after`, which adds RateLimit-* and X-Request-Id).
  'shared/http/middlewares.ts': 1,
};

/** Where the class is defined; its uses are what is counted. */
const DEFINES_THEM = new Set(['shared/domain/errors.ts']);

/** The layers whose throws are counted: the use cases' and the edges' that present their outcomes. */
const CALLER_ERROR_DIRS = ['shared/app', 'shared/db', 'shared/domain', 'functions', 'shared/http'];

// ---------------------------------------------------------------------------------------------
// 2. What a function depends on is in its signature, not in an AsyncLocalStorage.

const asyncStoresIn = (text: string) => [...text.matchAll(/new AsyncLocalStorage\b/g)].length;

/**
 * The one store left: the logger's (shared/log.ts says why it earns its place: Powertools Logger
 * calls our formatter with no argument of ours, and its keys live on its shared instance while the
 * local gateway runs many handlers in one process; docs/architecture.md "Logging context"). The
 * time budget and abort signal, the DynamoDB call stats and the dry run are the request context
 * (shared/context.ts), passed down as a parameter.
 */
const ASYNC_STORES_CEILING: Readonly<Record<string, number>> = {
  'shared/log.ts': 1,
};

// ---------------------------------------------------------------------------------------------
// 3. Key items (a key, its token, its id) are written by their own folder, shared/db/key.

/**
 * Counts the places a file writes a key's items (shared/db/keys.ts: `keys.key`, `keys.token`, the
 * key id sequence): building one with the key folder's item mappers (`keyItem`, `tokenItem`),
 * taking a key id (`keys.keySequence()`), or an Update or Delete (a transaction's action or a
 * command) whose Key is a key or token item. Reads (Get, Query, ConditionCheck) do not count.
 */
function keyItemWritesIn(text: string): number {
  const builders = [...text.matchAll(/(?<!\w)(?<![^.]\.)(?:keyItem|tokenItem)\(|\bkeys\.keySequence\(/g)].length;
  const actions = [
    ...text.matchAll(
      /(?:\b(?:Update|Delete|Put)\s*:\s*\{|new (?:Update|Delete|Put)Command\(\s*\{)[^}]*?(?:\bKey:\s*|\.\.\.)keys\.(?:key|token)\(/g,
    ),
  ].length;
  return builders + actions;
}

/**
 * None: an OAuth grant is a key, and the OAuth repositories that commit its items in their
 * transactions take the actions from shared/db/key/grant.repo.ts.
 */
const KEY_ITEM_WRITERS_CEILING: Readonly<Record<string, number>> = {};

// ---------------------------------------------------------------------------------------------
// 4. A cancelled transaction's reasons are read by name (NamedTransaction, shared/db/core/helpers.ts).

/**
 * Counts the places a file reads a cancellation reason by its position (`reasons[0]`,
 * `cancellationReasons(err)?.[0]`): the position moves as soon as an action is added before it.
 */
const positionalReasonsIn = (text: string) =>
  [...text.matchAll(/(?:\breasons|\bcancellationReasons\([^)]*\))\??\.?\[\s*\d+\s*\]/g)].length;

/** None: every transaction whose reasons are read is a namedTransaction, asked by name. */
const POSITIONAL_REASONS_CEILING: Readonly<Record<string, number>> = {};

// ---------------------------------------------------------------------------------------------
// 5. Contention in one home: a repository makes one attempt and answers what happened; the use
//    case (shared/app, with shared/app/contention.ts) decides whether to go round again, settle or
//    refuse. So no loop in shared/db or shared/domain goes round a store call again.

const parsed = new Map<string, ts.SourceFile>();
/** A file's syntax tree, parsed once for every check that reads it. */
function parse(file: string, text: string): ts.SourceFile {
  const key = `${file}\0${text}`;
  let tree = parsed.get(key);
  if (!tree) parsed.set(key, (tree = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)));
  return tree;
}

const isLoop = (n: ts.Node): n is ts.IterationStatement =>
  ts.isForStatement(n) ||
  ts.isForOfStatement(n) ||
  ts.isForInStatement(n) ||
  ts.isWhileStatement(n) ||
  ts.isDoStatement(n);

/**
 * Every node under `node` but those of a loop inside it (judged on its own); with `ownCode`, not
 * those of functions defined inside it either (they run on their own terms).
 */
function descendants(node: ts.Node, ownCode: boolean): ts.Node[] {
  const found: ts.Node[] = [];
  const walk = (n: ts.Node) => {
    found.push(n);
    if (!(ownCode && ts.isFunctionLike(n)) && !isLoop(n)) ts.forEachChild(n, walk);
  };
  ts.forEachChild(node, walk);
  return found;
}

/** The name of the function a node belongs to (`file: name` in the messages and the allowance below). */
function functionOf(node: ts.Node): string {
  for (let p: ts.Node | undefined = node.parent; p; p = p.parent) {
    if ((ts.isFunctionDeclaration(p) || ts.isMethodDeclaration(p)) && p.name) return p.name.getText();
    if (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p)) return p.name.getText();
  }
  return '(module)';
}

const WAITS = /^(setTimeout|setInterval|sleep\w*|backoff\w*|delay\w*|wait\w*)$/i;
const ATTEMPT_COUNTER = /^(attempts?|retr(y|ies)|tries|rounds?)$/i;

/**
 * The loops of a file that go round a call again, as `function: why`. A loop is one when it does
 * what a retry does and a walk over data or pages never needs to:
 * - it catches inside its body (a failed call caught and the loop going on), or
 * - it waits inside its body (a timer, or a call named sleep, backoff, delay or wait), or
 * - its header counts attempts (a counter named attempt, retry, tries or round).
 * Walking a list, the items of a batch or a Query's pages (LastEvaluatedKey) does none of these.
 */
function retryLoopsIn(file: string, text: string): string[] {
  const loops: string[] = [];
  const visit = (node: ts.Node) => {
    if (isLoop(node)) {
      const why: string[] = [];
      const own = descendants(node.statement, true);
      if (own.some((n) => ts.isTryStatement(n) && n.catchClause)) why.push('catches');
      const calls = descendants(node.statement, false).filter(ts.isCallExpression);
      if (calls.some((c) => WAITS.test(c.expression.getText().split('.').at(-1) ?? ''))) why.push('waits');
      const header = ts.isForStatement(node) ? [node.initializer, node.incrementor] : [];
      const counters = header.flatMap((h) => (h ? [h, ...descendants(h, true)] : [])).filter(ts.isIdentifier);
      if (counters.some((id) => ATTEMPT_COUNTER.test(id.text))) why.push('counts attempts');
      if (why.length > 0) loops.push(`${functionOf(node)}: ${why.join(', ')}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(parse(file, text));
  return loops;
}

/**
 * Completing one BatchGetItem / BatchWriteItem that DynamoDB answered in part (UnprocessedKeys /
 * UnprocessedItems, left over when the table throttles), after a short wait, as the SDK's own
 * retries complete one call: capacity, not contention. No condition failed and nothing is decided
 * again, so there is nothing for a use case to decide.
 */
const RESENDS_OF_ONE_CALL: Readonly<Record<string, readonly string[]>> = {
  'shared/db/core/helpers.ts': ['batchGet: waits, counts attempts', 'worker: waits, counts attempts'],
};

// ---------------------------------------------------------------------------------------------
// 6. Storage and the domain never call back into a use case. They cannot import shared/app
//    (.dependency-cruiser.cjs: db-below-app, domain-is-pure), so a function handed down as an
//    argument is the only way back up: count the functions of shared/db and shared/domain that
//    take one (a parameter typed as a function, defaulting to one, or an object of them).

const isFunctionType = (type: ts.TypeNode | undefined): boolean =>
  type !== undefined &&
  (ts.isFunctionTypeNode(type) ||
    (ts.isParenthesizedTypeNode(type) && isFunctionType(type.type)) ||
    (ts.isUnionTypeNode(type) && type.types.some(isFunctionType)) ||
    (ts.isTypeLiteralNode(type) &&
      type.members.some((m) => ts.isMethodSignature(m) || (ts.isPropertySignature(m) && isFunctionType(m.type)))));

/** The functions of a file that take a function from their caller, by name. */
function callbackTakersIn(file: string, text: string): string[] {
  const takers: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && !ts.isFunctionTypeNode(node) && !ts.isMethodSignature(node)) {
      const takesOne = node.parameters.some(
        (p) =>
          isFunctionType(p.type) ||
          (p.initializer !== undefined &&
            (ts.isArrowFunction(p.initializer) || ts.isFunctionExpression(p.initializer))),
      );
      const name = node.name?.getText() ?? (ts.isVariableDeclaration(node.parent) ? node.parent.name.getText() : '');
      // An arrow function or callback defined inside a function is that function's own code.
      if (takesOne && name) takers.push(name);
    }
    ts.forEachChild(node, visit);
  };
  visit(parse(file, text));
  return takers;
}

/**
 * Today's: db/oauth's own wrapper of a conditional write, handed closures of db/oauth only. (The
 * request scopes that ran the caller's work in an AsyncLocalStorage, and the dry run's hold on the
 * client, are gone: the request context is passed down, section 2, and a use case honours its
 * dry run itself.)
 */
const CALLBACK_TAKERS_CEILING: Readonly<Record<string, number>> = {
  'shared/db/oauth/write.ts': 1,
};

// ---------------------------------------------------------------------------------------------

describe('pipeline ratchets', () => {
  it('counts no more thrown caller outcomes in the use cases, storage, the domain and the edges than today', () => {
    const files = tsFiles(CALLER_ERROR_DIRS).filter((f) => !DEFINES_THEM.has(f));
    const problems = overAndUnder(
      countsOf(files, callerErrorsIn),
      CALLER_ERRORS_CEILING,
      'Return the outcome as a value (Refused, shared/domain/outcome.ts) and let the surface present it; throw only faults (service_unavailable, internal_error).',
    );
    expect(problems).toEqual([]);
  });

  it('counts no more AsyncLocalStorage stores than today', () => {
    const problems = overAndUnder(
      countsOf(tsFiles(SOURCE_DIRS), asyncStoresIn),
      ASYNC_STORES_CEILING,
      'Pass what the function depends on in its signature (the request context) instead of a new AsyncLocalStorage.',
    );
    expect(problems).toEqual([]);
  });

  it('lets no file outside shared/db/key write a key item', () => {
    const files = tsFiles(SOURCE_DIRS).filter((f) => !f.startsWith('shared/db/key/') && f !== 'shared/db/keys.ts');
    const problems = overAndUnder(
      countsOf(files, keyItemWritesIn),
      KEY_ITEM_WRITERS_CEILING,
      'Write key items through a function of shared/db/key (a TransactItem the caller adds to its transaction).',
    );
    expect(problems).toEqual([]);
  });

  it('counts no more positional reads of cancellation reasons than today', () => {
    const problems = overAndUnder(
      countsOf(tsFiles(SOURCE_DIRS), positionalReasonsIn),
      POSITIONAL_REASONS_CEILING,
      'Send the transaction as a namedTransaction (shared/db/core/helpers.ts) and ask its Cancellation by name.',
    );
    expect(problems).toEqual([]);
  });

  it('finds no retry loop in shared/db or shared/domain: a repository makes one attempt', () => {
    const problems = tsFiles(['shared/db', 'shared/domain']).flatMap((file) => {
      const allowed = RESENDS_OF_ONE_CALL[file] ?? [];
      return retryLoopsIn(file, read(file))
        .filter((loop) => !allowed.includes(loop))
        .map(
          (loop) =>
            `${file}: ${loop}. Make one attempt and return what happened (lost, stale, unanswered); let the use case go round again (shared/app/contention.ts).`,
        );
    });
    expect(problems).toEqual([]);
  });

  it('finds no function of shared/db or shared/domain that takes a function from its caller, past today', () => {
    const problems = overAndUnder(
      Object.fromEntries(
        tsFiles(['shared/db', 'shared/domain'])
          .map((file) => [file, callbackTakersIn(file, read(file)).length] as const)
          .filter(([, n]) => n > 0),
      ),
      CALLBACK_TAKERS_CEILING,
      'Answer what happened as a value and let the use case decide; storage and rules never call back into shared/app.',
    );
    expect(problems).toEqual([]);
  });

  it('leaves functions/mcp no outcome mapping of its own: it presents through the outcome table', () => {
    const mapping = /\bstatusOf\(|\bOUTCOME_TABLE\b|instanceof DomainError|'internal_error'|toolResult\(\s*[45]\d\d\b/;
    const offenders = tsFiles(['functions/mcp']).filter((f) => mapping.test(read(f)));
    expect(offenders).toEqual([]);
  });
});

describe('what the ratchets count', () => {
  it('counts a thrown caller outcome and lets a fault through', () => {
    expect(callerErrorsIn(`throw new DomainError('not_found', 'gone');`)).toBe(1);
    expect(callerErrorsIn(`throw new DomainError(\n  'resource_busy',\n  'busy', null, 1);`)).toBe(1);
    expect(callerErrorsIn(`throw new DomainError(code, message, field);`)).toBe(1);
    expect(callerErrorsIn(`throw new DomainError('service_unavailable', 'down', null, 1);`)).toBe(0);
    expect(callerErrorsIn(`throw new DomainError(\n  'internal_error', 'bug');`)).toBe(0);
  });

  it('tells a retry loop from a walk over data or pages', () => {
    const retry = `async function commit() {
      for (let attempt = 1; ; attempt++) {
        try { return await send(); } catch (err) { if (!conflict(err)) throw err; }
      }
    }`;
    expect(retryLoopsIn('x.ts', retry)).toEqual(['commit: catches, counts attempts']);
    const waits = `async function settle() { while (true) { const o = await resend(); if (o.kind !== 'x') return o; await backoff(1); } }`;
    expect(retryLoopsIn('x.ts', waits)).toEqual(['settle: waits']);
    const timer = `const send = async () => { do { await new Promise((r) => setTimeout(r, 10)); } while (await again()); };`;
    expect(retryLoopsIn('x.ts', timer)).toEqual(['send: waits']);
    const pages = `async function all() {
      let start; const items = [];
      do { const out = await query(start); items.push(...out.Items); start = out.LastEvaluatedKey; } while (start);
      for (const item of items) check(item);
      for (let i = 0; i < items.length; i += 100) await write(items.slice(i, i + 100));
      return items;
    }`;
    expect(retryLoopsIn('x.ts', pages)).toEqual([]);
    // A try/catch inside a callback the loop defines is that callback's, not the loop's.
    expect(
      retryLoopsIn('x.ts', `function f(xs) { for (const x of xs) run(() => { try { g(x); } catch {} }); }`),
    ).toEqual([]);
  });

  it('counts the functions that take a function from their caller, and not those that define their own', () => {
    expect(
      callbackTakersIn('x.ts', 'export async function authenticate(hash: string, admits: (p: P) => boolean) {}'),
    ).toEqual(['authenticate']);
    expect(callbackTakersIn('x.ts', 'export function check(admits = () => true) {}')).toEqual(['check']);
    expect(
      callbackTakersIn('x.ts', 'export async function retry<S>(o: { read: () => Promise<S>; what: string }) {}'),
    ).toEqual(['retry']);
    expect(callbackTakersIn('x.ts', 'class C { time<T>(round: () => Promise<T>) {} }')).toEqual(['time']);
    expect(
      callbackTakersIn('x.ts', 'export function f(items: number[]) { return items.map((i: number) => i + 1); }'),
    ).toEqual([]);
  });

  it('counts a new AsyncLocalStorage', () => {
    expect(asyncStoresIn('const s = new AsyncLocalStorage<Ctx>();')).toBe(1);
  });

  it('counts a cancellation reason read by position and not one read by name', () => {
    expect(positionalReasonsIn(`reason: out.reasons[0] === 'ConditionalCheckFailed' ? 'spent' : 'conflict'`)).toBe(1);
    expect(positionalReasonsIn(`if (cancellationReasons(err)?.[0]?.Code === 'ConditionalCheckFailed') {`)).toBe(1);
    expect(positionalReasonsIn(`cancelled.failed('spend') ? 'spent' : 'conflict'`)).toBe(0);
    expect(positionalReasonsIn(`return reasons.slice(from, to);`)).toBe(0);
  });

  it('counts writes of key items and not their reads', () => {
    expect(keyItemWritesIn(`Item: keyItem(record, {})`)).toBe(1);
    expect(keyItemWritesIn(`Item: { ...tokenItem(record, currency), kind: 'grant' }`)).toBe(1);
    expect(keyItemWritesIn(`{ Update: { TableName: t(), Key: keys.key(id), UpdateExpression: 'SET a = :a' } }`)).toBe(
      1,
    );
    expect(keyItemWritesIn(`{ Delete: { TableName: tableName(), Key: keys.token(hash) } }`)).toBe(1);
    expect(
      keyItemWritesIn(`new UpdateCommand({ TableName: tableName(), Key: keys.token(h), UpdateExpression: 'x' })`),
    ).toBe(1);
    expect(keyItemWritesIn(`{ Put: { TableName: tableName(), Item: { ...keys.key(id), kind: 'grant' } } }`)).toBe(1);
    expect(
      keyItemWritesIn(`new GetCommand({ TableName: tableName(), Key: keys.token(h), ConsistentRead: true })`),
    ).toBe(0);
    expect(keyItemWritesIn(`':pk': keys.key(keyId).pk`)).toBe(0);
  });
});
