/**
 * The AWS cost per million requests of each endpoint, from what its requests did on the local
 * stack: DynamoDB units by the billing rules (bench/billing-units.ts), the time the request took,
 * the log lines the functions printed at the deployed log level (info, EMF metrics on) plus the
 * access log line, and the answer's bytes; priced by bench/cost-model.ts with bench/prices.ts.
 * Requests run one at a time, so every DynamoDB call and log line belongs to the request in flight.
 */
import { ACCESS_LOG_FIELDS } from '#infra/access-log-fields.ts';
import { rawDb } from '#db/core/client.ts';
import { setRequestLogging } from '#shared/log.ts';
import { setMetricsEnabled } from '#shared/metrics.ts';
import type { RequestLogEntry } from '#emulation/local/request-log.ts';
import { meterBillingUnits } from './billing-units.ts';
import { percentile, startBenchStack } from './bench-stack.ts';
import { costPerMillion, usd, type Measured } from './cost-model.ts';
import { COST_SCENARIOS, type CostScenario } from './cost-scenarios.ts';
import { PRICES } from './prices.ts';
import { seedOrders, seedProducts } from './seed.ts';
import type { BenchSection } from './section.ts';

const PRODUCTS = Number(process.env.BENCH_PRODUCTS ?? 2000);
const ORDERS = Number(process.env.BENCH_ORDERS ?? 500);
const REQUESTS = Number(process.env.BENCH_COST_REQUESTS ?? 20);
// Request i uses key i mod KEYS: a publish comes from the key that made the page; none nears 60/min.
const KEYS = 10;

/** The API's access log line in AWS for a request the local gateway logged: the stage's format filled with values of AWS's lengths. */
function accessLogBytes(entry: RequestLogEntry, resource: string, responseLength: number): number {
  const values: Record<string, string> = {
    request_id: entry.request_id,
    extended_request_id: 'BbR4xHmQIAMEYzw=',
    time: '25/Nov/2026:04:38:51 +0000',
    ip: '203.0.113.10',
    user_agent: 'integration-client/1.4 (node)',
    method: entry.method,
    resource,
    path: entry.path,
    status: String(entry.status),
    response_length: String(responseLength),
    latency_ms: String(entry.latency_ms),
    integration_latency_ms: String(entry.latency_ms),
    key_id: entry.key_id ?? '-',
    store_id: entry.store_id ?? '-',
    authorizer_status: '200',
    authorizer_latency_ms: '12',
    error: '-',
    waf_status: '-',
    xray_trace_id: '1-6745a3b7-3f0c1d2e4b5a69788a9bc0de',
  };
  return (
    Buffer.byteLength(
      JSON.stringify(Object.fromEntries(Object.keys(ACCESS_LOG_FIELDS).map((k) => [k, values[k] ?? '-']))),
    ) + 1
  );
}

type Row = { scenario: CostScenario; measured: Measured; bad: number };

/** Every row of the last run, for the cost section of docs/deploy.md (bench/deploy-cost.ts). */
export let lastCostRows: Row[] = [];

export const costSection: BenchSection = {
  name: 'cost',
  async run() {
    let access: RequestLogEntry | undefined;
    const bench = await startBenchStack({
      storeId: 'cost',
      keys: KEYS,
      env: { LOG_LEVEL: 'info' },
      requestLog: (e) => void (access = e),
    });
    // By request id (X-Request-Id): the authorizer's and the handler's calls of one request.
    const billedBy = new Map<string, { rru: number; wru: number; meterMs: number }>();
    meterBillingUnits(rawDb(), (b, _command, requestId) => {
      const billed = billedBy.get(requestId) ?? { rru: 0, wru: 0, meterMs: 0 };
      billed.rru += b.rru;
      billed.wru += b.wru;
      billed.meterMs += b.meterMs;
      billedBy.set(requestId, billed);
    });
    // What the functions print goes to stdout in Lambda (CloudWatch Logs): counted, not shown.
    const log = { bytes: 0, lines: 0 };
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string | Uint8Array) => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
      log.bytes += Buffer.byteLength(text);
      log.lines += text.split('\n').filter(Boolean).length;
      // A 500's cause would otherwise vanish with the rest.
      if (text.includes('"level":"error"')) process.stderr.write(text);
      return true;
    }) as typeof process.stdout.write;
    setRequestLogging(true);
    setMetricsEnabled(true);
    try {
      await seedProducts(bench.storeId, PRODUCTS);
      await seedOrders(bench.storeId, ORDERS);
      await bench.namesIndexed();
      const tokenFor = (i: number) => bench.tokens[i % bench.tokens.length] as string;
      const send = async (s: Pick<CostScenario, 'method' | 'path' | 'body' | 'headers'>, i: number) => {
        const res = await fetch(bench.stack.baseUrl + s.path(i), {
          method: s.method,
          headers: {
            Authorization: `Bearer ${tokenFor(i)}`,
            Accept: 'application/json',
            'Accept-Encoding': 'gzip',
            'Content-Type': 'application/json',
            ...s.headers?.(i),
          },
          body: s.body ? JSON.stringify(s.body(i)) : undefined,
        });
        const body = await res.arrayBuffer();
        const length = Number(res.headers.get('content-length') ?? body.byteLength);
        let head = `HTTP/1.1 ${res.status} ${res.statusText}\r\n\r\n`.length;
        for (const [k, v] of res.headers) head += k.length + v.length + 4;
        return {
          status: res.status,
          requestId: res.headers.get('x-request-id') ?? '',
          bytes: head + length,
          length,
          text: res.status >= 300 ? Buffer.from(body).toString().slice(0, 200) : '',
        };
      };
      const rows: Row[] = [];
      for (const s of COST_SCENARIOS) {
        for (let i = 0; i < REQUESTS; i++) if (s.setup) await send(s.setup, i);
        const total: Measured = {
          rru: 0,
          wru: 0,
          invocations: 0,
          lambdaMs: 0,
          logBytes: 0,
          logLines: 0,
          responseBytes: 0,
        };
        let bad = 0;
        const ms: number[] = [];
        for (let i = 0; i < REQUESTS; i++) {
          billedBy.clear();
          Object.assign(log, { bytes: 0, lines: 0 });
          access = undefined;
          bench.resetSamples();
          const answer = await send(s, i);
          const sample = bench.samples()[0];
          const billed = billedBy.get(answer.requestId) ?? { rru: 0, wru: 0, meterMs: 0 };
          if (answer.status >= 300 && bad++ === 0)
            process.stderr.write(`bench cost: ${s.name} answered ${answer.status} ${answer.text}\n`);
          total.rru += billed.rru;
          total.wru += billed.wru;
          total.invocations += 2;
          ms.push(Math.max(0, (sample?.ms ?? 0) - billed.meterMs));
          total.logBytes += log.bytes + (access ? accessLogBytes(access, s.route, answer.length) : 0);
          total.logLines += log.lines + (access ? 1 : 0);
          total.responseBytes += answer.bytes;
        }
        const measured = Object.fromEntries(
          Object.entries(total).map(([k, v]) => [k, v / REQUESTS]),
        ) as unknown as Measured;
        // The median: a row's first request may load its function's module. Each of the two
        // invocations is billed by the ms, rounded up.
        measured.lambdaMs = percentile(ms, 50) + 1;
        rows.push({ scenario: s, measured, bad });
      }
      lastCostRows = rows;
      return report(rows);
    } finally {
      process.stdout.write = write;
      setRequestLogging(false);
      setMetricsEnabled(false);
      await bench.stop();
    }
  },
};

function report(rows: Row[]): string {
  const lines = rows.map(({ scenario: s, measured: m, bad }) => {
    const c = costPerMillion(m);
    return (
      `| ${s.name} | ${m.rru.toFixed(1)} | ${m.wru.toFixed(1)} | ${m.lambdaMs.toFixed(0)} | ${(c.billedLogBytes / 1024).toFixed(2)} | ${(m.responseBytes / 1024).toFixed(1)} | ` +
      `${usd(c.apiGateway)} | ${usd(c.lambda)} | ${usd(c.dynamodb)} | ${usd(c.logs)} | ${usd(c.other)} | **${usd(c.total)}** |` +
      (bad ? ` ${bad} non-2xx` : '')
    );
  });
  return (
    `## Cost per million requests\n\n` +
    `AWS ${PRICES.region} list prices of ${PRICES.asOf} (bench/prices.ts), first tier, no free tier; ${REQUESTS} requests per row, one at a time, on a store of ${PRICES_NOTE}. ` +
    `RRU/WRU: DynamoDB request units by AWS's billing rules (bench/billing-units.ts; the authorizer's included). ` +
    `Lambda ms: the local stack's time for the whole request, billed for the authorizer and the handler at their memory (a stand-in for AWS's duration; it varies with load). ` +
    `Log KB: what CloudWatch Logs ingests per request, the functions' own lines at the deployed level, EMF included, the access log line, 26 bytes per line and the platform's lines. ` +
    `Response KB: the answer on the wire (data transfer out). "Other": X-Ray at the default 5% sampling and data transfer out.\n\n` +
    '| endpoint | RRU | WRU | Lambda ms | log KB | response KB | $ API Gateway + WAF | $ Lambda | $ DynamoDB | $ logs | $ other | $ per million |\n' +
    '|---|---|---|---|---|---|---|---|---|---|---|---|\n' +
    lines.join('\n') +
    '\n'
  );
}

const PRICES_NOTE = `${PRODUCTS} products and ${ORDERS} orders`;
