/**
 * How long filter[name] stays unavailable after an import: a CRM's first sync of BENCH_NAME_LAG_SIZES
 * (default 1000,10000) new products, each size on a store of its own, sent as batches of 100 one
 * after another through the local gateway (the batch endpoint, as a client sends them). From the
 * last batch's answer on, `filter[name]` is asked every POLL_MS until it answers 200: "search back"
 * is that wait; "all indexed" is when the store's last pending name was taken in.
 */
import { newContext } from '#shared/context.ts';
import { startBenchStack } from './bench-stack.ts';
import type { BenchSection } from './section.ts';
import { pendingNameCount } from '#db/name-index/repo.ts';
import { resetConfig } from '#shared/config.ts';

const SIZES = (process.env.BENCH_NAME_LAG_SIZES ?? '1000,10000').split(',').map(Number);
const BATCH = 100;
const POLL_MS = 100;
const WORDS = ['Oak', 'Walnut', 'Linen', 'Brass', 'Nordic', 'Rattan', 'Velvet', 'Maple'];

type Row = { size: number; importSeconds: number; searchBack: number; allIndexed: number; refusals: number };

export const nameLagSection: BenchSection = {
  name: 'name-lag',
  async run() {
    // One key sends every batch: its allowance is raised so that the import, not it, is measured.
    const allowance = process.env.RATE_LIMIT_PER_MINUTE;
    resetConfig();
    const bench = await startBenchStack({ storeId: 'lag', keys: 0, env: { RATE_LIMIT_PER_MINUTE: '1000' } });
    const ask = (token: string, method: string, path: string, body?: unknown) =>
      fetch(`${bench.stack.baseUrl}${path}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const measure = async (size: number): Promise<Row> => {
      const storeId = `lag-${size}`;
      await bench.admin('stores create', { id: storeId, name: 'Name lag', currency: 'EUR' });
      const { token } = await bench.admin<{ token: string }>('keys create', {
        store: storeId,
        name: 'crm',
        abilities: 'catalog:read,catalog:write',
      });
      const started = performance.now();
      for (let from = 0; from < size; from += BATCH) {
        const items = Array.from({ length: Math.min(BATCH, size - from) }, (_, k) => {
          const i = from + k;
          return { external_id: `crm-${i}`, name: `${WORDS[i % WORDS.length]} chair ${i}`, price: 1000 + i };
        });
        const res = await ask(token, 'POST', '/catalog/products/batch', { items });
        const body = (await res.json()) as { data?: { status: number; error: unknown }[] };
        const failed = body.data?.filter((item) => item.status !== 200).length ?? items.length;
        if (res.status !== 200 || failed > 0)
          throw new Error(
            `batch at ${from} answered ${res.status}, ${failed} failed: ${JSON.stringify(body.data?.find((item) => item.status !== 200))}`,
          );
      }
      const imported = performance.now();
      let refusals = 0;
      let searchBack = 0;
      for (;;) {
        const res = await ask(token, 'GET', '/products?filter%5Bname%5D=walnut&limit=1');
        await res.arrayBuffer();
        if (res.status === 200) {
          searchBack = performance.now() - imported;
          break;
        }
        if (res.status !== 503) throw new Error(`filter[name] answered ${res.status}`);
        refusals++;
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
      while ((await pendingNameCount(newContext(), storeId)) > 0) await new Promise((r) => setTimeout(r, POLL_MS));
      const row = {
        size,
        importSeconds: (imported - started) / 1000,
        searchBack: searchBack / 1000,
        allIndexed: (performance.now() - imported) / 1000,
        refusals,
      };
      process.stderr.write(`bench: name-lag: ${JSON.stringify(row)}\n`);
      return row;
    };
    try {
      const rows: Row[] = [];
      for (const size of SIZES) rows.push(await measure(size));
      return (
        '## filter[name] after an import\n\n' +
        `A CRM's first sync of new products, each size on a store of its own: batches of ${BATCH} one after another ` +
        `through the local gateway. "search back" is how long after the last batch's answer \`filter[name]\` first ` +
        `answered 200 (asked every ${POLL_MS} ms; until then 503 while the names are being indexed); "all indexed" ` +
        'is when the last pending name was taken in.\n\n' +
        '| products | import s | search back s | 503s while waiting | all indexed s |\n|---|---|---|---|---|\n' +
        rows
          .map(
            (r) =>
              `| ${r.size} | ${r.importSeconds.toFixed(1)} | ${r.searchBack.toFixed(1)} | ${r.refusals} | ${r.allIndexed.toFixed(1)} |`,
          )
          .join('\n') +
        '\n'
      );
    } finally {
      await bench.stop();
      if (allowance === undefined) delete process.env.RATE_LIMIT_PER_MINUTE;
      else process.env.RATE_LIMIT_PER_MINUTE = allowance;
      resetConfig();
    }
  },
};
