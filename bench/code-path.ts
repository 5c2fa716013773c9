/**
 * Which of the project's files one request runs through: `PUT /catalog/products/{external_id}`
 * (a create and a replace), measured with V8's precise coverage in this process, where the local
 * stack runs the authorizer and the catalog handler. Coverage is reset, one request sent, and
 * every file with a function that ran since is counted; the local gateway and stack
 * (emulation/) and libraries are counted apart from the product's own files. The stack runs no
 * stream consumers here (in AWS they are other Lambdas, run later), and a file counts only if it
 * ran in every one of RUNS requests.
 *
 * A visit is a function run during the request. Warm-up requests first run every module's top
 * level and every lazy set-up (the clients, the config read once, the schemas), so code that
 * runs only when a module loads is never counted; a function defined in a file and called back
 * by a library is (a valibot check of shared/domain/text.ts). The authorizer and the handler run
 * in this one process, so a file both run counts once. The local gateway also calls a few
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

type PathReport = { label: string; product: string[]; emulation: string[]; packages: string[] };

function classify(label: string, files: Set<string>): PathReport {
  const all = [...files].sort();
  const own = all.filter((f) => !f.includes('node_modules/') && !f.startsWith('..'));
  return {
    label,
    product: own.filter((f) => /^(functions|shared)\//.test(f)),
    emulation: own.filter((f) => f.startsWith('emulation/')),
    packages: [...new Set(all.filter((f) => f.includes('node_modules/')).map(packageOf))].sort(),
  };
}

export const codePathSection: BenchSection = {
  name: 'path',
  async run() {
    const bench = await startBenchStack({ storeId: 'path', keys: 1, streamConsumers: false });
    const session = new Session();
    session.connect();
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
        let common: Set<string> | undefined;
        for (let i = 0; i < RUNS; i++) {
          await session.post('Profiler.takePreciseCoverage'); // resets the counts
          await send(i);
          const ran = filesRun((await session.post('Profiler.takePreciseCoverage')) as Coverage);
          common = common ? new Set([...common].filter((f) => ran.has(f))) : ran;
        }
        return classify(label, common ?? new Set());
      };
      const reports = [
        await measure('create', (i) => put(`new-${i}`, 1)),
        await measure('replace', (i) => put(`warm-${i % 3}`, 3 + i)),
      ];
      await session.post('Profiler.stopPreciseCoverage');
      for (const r of reports)
        process.stderr.write(
          `bench: path: ${r.label}: ${r.product.length} product files\n  ${r.product.join('\n  ')}\n`,
        );
      return (
        '## The files a PUT runs through\n\n' +
        "Which of the project's files `PUT /catalog/products/{external_id}` runs, authorizer and catalog handler " +
        `included, by V8's precise coverage: counts reset, one request, every file with a function that ran, kept if it ran in ` +
        `each of ${RUNS} requests. Warm-up requests run every module's top level and lazy set-up first, so a file whose code ` +
        'runs only when it loads is not counted. Product files are functions/ and shared/; the local gateway (emulation/) and ' +
        'the libraries are counted apart. `BENCH_ONLY=path npm run bench` prints the lists; docs/architecture.md ' +
        '("The path of a request") walks them in call order.\n\n' +
        '| request | product files | emulation files | packages |\n|---|---|---|---|\n' +
        reports
          .map((r) => `| ${r.label} | ${r.product.length} | ${r.emulation.length} | ${r.packages.length} |`)
          .join('\n') +
        '\n\n' +
        reports
          .map(
            (r) =>
              `<details><summary>${r.label}: the ${r.product.length} product files</summary>\n\n` +
              r.product.map((f) => `- \`${f}\``).join('\n') +
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
