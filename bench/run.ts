/**
 * `npm run bench`: what a request costs, measured on this machine. Sections (each starts what it
 * needs and reports Markdown):
 *
 *   requests  DynamoDB round trips, units and latency per request, by endpoint group
 *   cost      AWS cost per million requests of each endpoint, from its units, time, log bytes and answer (bench/prices.ts)
 *   search    filter[name] round trips, RCU and latency at 10,000 and 100,000 products
 *   name-lag  how long filter[name] answers 503 after a 1,000- and a 10,000-product import
 *   creates   product creates per second on one store with 1, 10 and 50 writers, refusals and 5xx; one key's 60 batches in a row
 *   store     DynamoDB Local's own write ceiling: items/s by transactions and by batch writes, 1, 10 and 50 writers
 *   hot       20 writers PATCHing one product: latency, refusals and DynamoDB calls per request
 *   throughput  GET /products/{id} per second against raw GetItem on the same DynamoDB Local, CPU per request
 *   events    the WRU each event adds to its write, numbering's units, GET /events round trips
 *   webhooks  a healthy receiver's delivery latency (p50/p95) beside receivers that hang, drip and fail
 *   destinations  delivery latency per destination kind: webhook, SQS standard and FIFO queues, EventBridge bus
 *   import-webhooks  order-webhook latency while the same store imports 10,000 products
 *   bundles   each Lambda's bundle size and import time against the SDK floor (synthesizes the app)
 *   path      the project's files one PUT /catalog/products/{external_id} runs through (V8 coverage)
 *
 * `BENCH_ONLY=requests,bundles` runs only those and prints them. A full run (no BENCH_ONLY) also
 * rewrites docs/performance.md and the cost section of docs/deploy.md (bench/deploy-cost.ts), so the figures
 * in the docs are always a whole run's; `BENCH_ONLY=cost BENCH_DEPLOY_COST=1` rewrites that section alone. Run it on an
 * idle machine: latency and import times share the CPU with everything else.
 */
import { writeFileSync } from 'node:fs';
import { bundlesSection } from './bundles.ts';
import { costSection, lastCostRows } from './cost.ts';
import { deployCostSection, writeDeployCost } from './deploy-cost.ts';
import { createsSection } from './creates.ts';
import { storeWritesSection } from './store-writes.ts';
import { hotItemSection } from './hot-item.ts';
import { requestsSection } from './requests.ts';
import { searchSection } from './search.ts';
import { nameLagSection } from './name-lag.ts';
import { throughputSection } from './throughput.ts';
import { webhooksSection } from './webhooks.ts';
import { destinationsSection } from './destinations.ts';
import { importWebhooksSection } from './import-webhooks.ts';
import { eventsSection } from './events.ts';
import { codePathSection } from './code-path.ts';
import { performanceHeader, wrongNode } from './header.ts';
import type { BenchSection } from './section.ts';

// In this order: the import timings run after the stacks are down, not sharing the CPU with DynamoDB Local.
const SECTIONS: BenchSection[] = [
  requestsSection,
  costSection,
  searchSection,
  nameLagSection,
  createsSection,
  storeWritesSection,
  hotItemSection,
  throughputSection,
  eventsSection,
  webhooksSection,
  destinationsSection,
  importWebhooksSection,
  codePathSection,
  bundlesSection,
];
const DOC = 'docs/performance.md';

const only = process.env.BENCH_ONLY?.split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const unknown = only?.filter((name) => !SECTIONS.some((s) => s.name === name)) ?? [];
if (unknown.length) {
  process.stderr.write(
    `BENCH_ONLY names no section: ${unknown.join(', ')} (sections: ${SECTIONS.map((s) => s.name).join(', ')})\n`,
  );
  process.exit(2);
}

// A full run writes the docs, whose figures are the functions': refused before its minutes of load on another Node.
const refusal = only ? undefined : wrongNode(process.version);
if (refusal) {
  process.stderr.write(`bench: ${refusal}\n`);
  process.exit(2);
}

const reports: string[] = [];
for (const section of SECTIONS.filter((s) => !only || only.includes(s.name))) {
  process.stderr.write(`bench: ${section.name}...\n`);
  const report = await section.run();
  process.stdout.write(`\n${report}`);
  reports.push(report);
}

if (lastCostRows.length > 0 && (!only || process.env.BENCH_DEPLOY_COST === '1')) {
  writeDeployCost(deployCostSection(lastCostRows));
  process.stderr.write('bench: wrote the cost section of docs/deploy.md\n');
}

if (!only) {
  const header = performanceHeader({
    date: new Date(),
    platform: process.platform,
    arch: process.arch,
    nodeVersion: process.version,
  });
  writeFileSync(DOC, header + reports.join('\n'));
  process.stderr.write(`bench: wrote ${DOC}\n`);
}
