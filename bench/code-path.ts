/**
 * Which of the project's files one request runs through: `PUT /catalog/products/{external_id}`
 * (a create and a replace), measured with V8's precise coverage in this process, where the local
 * stack runs the authorizer and the catalog handler. Coverage is reset, one request sent, and
 * every file with a function that ran since is counted; the local gateway and stack
 * (emulation/) and libraries are counted apart from the product's own files. The stack runs no
 * stream consumers here (in AWS they are other Lambdas, run later), and a file counts only if it
 * ran in every one of RUNS requests.
 *
 * Each Lambda is counted on its own and the request as a whole: the gateway's `onAuthorized` hook
 * takes the coverage between the two, so the authorizer's files are those that ran up to its
 * verdict and the handler's those that ran after it. A file both run (the context, the client,
 * the config) is in both lists and counts once for the request.
 *
 * A visit is a function run during the request. Warm-up requests first run every module's top
 * level and every lazy set-up (the clients, the config read once, the schemas), so code that
 * runs only when a module loads is never counted; a function defined in a file and called back
 * by a library is (a valibot check of shared/domain/text.ts). The local gateway also calls a few
 * product functions of its own (the route table's resourceOf, the context's newContext to add up
 * a request's calls, the client's contextOfCall, config() in the commit barrier); each of those
 * files is also run by the product's own code during the request, so none is counted for the
 * gateway alone.
 *
 * What it answers: how many files a maintainer follows from the route to DynamoDB. It is not the
 * import closure (dependency-cruiser counts that): a file imported for a type or an error class
 * that this request never runs is not on its path.
 */
import { Session } from 'node:inspector/promises';
import { relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBenchStack } from './bench-stack.ts';
import type { BenchSection } from './section.ts';

const RUNS = 5;
const ROOT = fileURLToPath(new URL('..', import.meta.url));

type Coverage = { result: { url: string; functions: { ranges: { count: number }[] }[] }[] };

/** Files (relative to the repository) with a function that ran since the last take. */
function filesRun(coverage: Coverage): Set<string> {
  const files = new Set<string>();
  for (const script of coverage.result) {
    if (!script.url.startsWith('file://')) continue;
    if (!script.functions.some((f) => (f.ranges[0]?.count ?? 0) > 0)) continue;
    files.add(relative(ROOT, fileURLToPath(script.url)).split(sep).join('/'));
  }
  return files;
}

const packageOf = (file: string) => {
  const parts = file.slice(file.lastIndexOf('node_modules/') + 'node_modules/'.length).split('/');
  return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? file);
};

type PathReport = {
  label: string;
  authorizer: string[];
  handler: string[];
  /** Both Lambdas' product files, a file both run once. */
  product: string[];
  emulation: string[];
  packages: string[];
};

const isProduct = (f: string) => /^(functions|shared)\//.test(f) && !f.includes('node_modules/');
const common = (a: Set<string> | undefined, b: Set<string>) => (a ? new Set([...a].filter((f) => b.has(f))) : b);

function classify(label: string, authorizer: Set<string>, handler: Set<string>): PathReport {
  const all = [...new Set([...authorizer, ...handler])].sort();
  const own = all.filter((f) => !f.includes('node_modules/') && !f.startsWith('..'));
  return {
    label,
    authorizer: [...authorizer].filter(isProduct).sort(),
    handler: [...handler].filter(isProduct).sort(),
    product: own.filter(isProduct),
    emulation: own.filter((f) => f.startsWith('emulation/')),
    packages: [...new Set(all.filter((f) => f.includes('node_modules/')).map(packageOf))].sort(),
  };
}

/** Which Lambda ran a file of the request: `authorizer`, `handler` or `both`. */
const ranBy = (r: PathReport, f: string) =>
  r.authorizer.includes(f) ? (r.handler.includes(f) ? 'both' : 'authorizer') : 'handler';

export const codePathSection: BenchSection = {
  name: 'path',
  async run() {
    let afterAuthorizer: (() => Promise<void>) | undefined;
    const bench = await startBenchStack({
      storeId: 'path',
      keys: 1,
      streamConsumers: false,
      onAuthorized: async () => afterAuthorizer?.(),
    });
    const session = new Session();
    session.connect();
    const take = async () => filesRun((await session.post('Profiler.takePreciseCoverage')) as Coverage);
    try {
      const put = async (xid: string, version: number) => {
        const res = await fetch(`${bench.stack.baseUrl}/catalog/products/${xid}`, {
          method: 'PUT',
          headers: { Authorization: `Bearer ${bench.tokens[0]}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ name: `Path ${xid} v${version}`, price: 1000 + version, sku: `PATH-${xid}` }),
        });
        await res.arrayBuffer();
        if (res.status !== 200 && res.status !== 201) throw new Error(`PUT ${xid}: ${res.status}`);
      };
      await session.post('Profiler.enable');
      await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
      // Warm: every lazy initialisation (clients, schemas, caches) done before anything is counted.
      for (let i = 0; i < 3; i++) {
        await put(`warm-${i}`, 1);
        await put(`warm-${i}`, 2);
      }
      const measure = async (label: string, send: (i: number) => Promise<void>) => {
        let authorizer: Set<string> | undefined;
        let handler: Set<string> | undefined;
        for (let i = 0; i < RUNS; i++) {
          await take(); // resets the counts
          let authorizerRan: Set<string> | undefined;
          afterAuthorizer = async () => void (authorizerRan = await take());
          await send(i);
          afterAuthorizer = undefined;
          const handlerRan = await take();
          if (!authorizerRan) throw new Error(`path: ${label}: the authorizer did not run`);
          authorizer = common(authorizer, authorizerRan);
          handler = common(handler, handlerRan);
        }
        return classify(label, authorizer ?? new Set(), handler ?? new Set());
      };
      const reports = [
        await measure('create', (i) => put(`new-${i}`, 1)),
        await measure('replace', (i) => put(`warm-${i % 3}`, 3 + i)),
      ];
      await session.post('Profiler.stopPreciseCoverage');
      for (const r of reports)
        process.stderr.write(
          `bench: path: ${r.label}: ${r.product.length} product files (authorizer ${r.authorizer.length}, ` +
            `handler ${r.handler.length})\n  ${r.product.map((f) => `${f} (${ranBy(r, f)})`).join('\n  ')}\n`,
        );
      return (
        '## The files a PUT runs through\n\n' +
        "Which of the project's files `PUT /catalog/products/{external_id}` runs, by V8's precise coverage: counts reset, " +
        `one request, every file with a function that ran, kept if it ran in each of ${RUNS} requests. The authorizer and the ` +
        'catalog handler are counted each on its own (the coverage is taken between them, when the gateway has the ' +
        "authorizer's verdict) and together, where a file both run counts once. Warm-up requests run every module's top " +
        'level and lazy set-up first, so a file whose code runs only when it loads is not counted. Product files are ' +
        'functions/ and shared/; the local gateway (emulation/) and the libraries are counted apart, for the request as a ' +
        'whole. `BENCH_ONLY=path npm run bench` prints the lists; docs/architecture.md ("The path of a request") walks ' +
        'them in call order.\n\n' +
        '| request | authorizer | catalog handler | product files, both together | emulation files | packages |\n' +
        '|---|---|---|---|---|---|\n' +
        reports
          .map(
            (r) =>
              `| ${r.label} | ${r.authorizer.length} | ${r.handler.length} | ${r.product.length} | ` +
              `${r.emulation.length} | ${r.packages.length} |`,
          )
          .join('\n') +
        '\n\n' +
        reports
          .map(
            (r) =>
              `<details><summary>${r.label}: the ${r.product.length} product files, and which Lambda ran each</summary>\n\n` +
              r.product.map((f) => `- \`${f}\` (${ranBy(r, f)})`).join('\n') +
              '\n\n</details>\n',
          )
          .join('\n')
      );
    } finally {
      session.disconnect();
      await bench.stop();
    }
  },
};
