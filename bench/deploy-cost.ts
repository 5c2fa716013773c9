/**
 * The cost section of docs/deploy.md, written from the cost bench's rows by a full `npm run bench`
 * (bench/run.ts): between the two markers below, nothing else of the page is touched.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { costPerMillion, usd, type Measured } from './cost-model.ts';
import type { CostScenario } from './cost-scenarios.ts';
import { PRICES } from './prices.ts';

export const COST_BEGIN = '<!-- cost:begin (written by npm run bench from its cost section; do not edit by hand) -->';
export const COST_END = '<!-- cost:end -->';

/** Requests per integration and day in the worked example, by cost row id. */
const DAILY_MIX: Record<string, { perDay: number; what: string }> = {
  'orders-poll': { perDay: 1440, what: 'polls for changed orders once a minute' },
  'order-status': { perDay: 40, what: 'order status changes' },
  'product-write': { perDay: 200, what: 'product updates' },
  'product-create': { perDay: 10, what: 'new products' },
  'product-read': { perDay: 300, what: 'product reads' },
  'product-list': { perDay: 100, what: 'list pages' },
  search: { perDay: 20, what: 'name searches' },
  'page-publish': { perDay: 2, what: 'page publishes' },
  'page-list': { perDay: 10, what: 'content list pages' },
};
const INTEGRATIONS = 50;
const PRODUCTS = 10_000;
/** At idle, per month (docs/deploy.md, "Cost"): alarms, the KMS key, empty long polls, storage. */
const IDLE_PER_MONTH = 6.6;
/** EMF metrics: 6 per API operation in use, plus the webhook metrics. */
const METRICS_IN_USE = 6 * 9 + 10;

export function deployCostSection(rows: { scenario: CostScenario; measured: Measured }[]): string {
  const byId = new Map(rows.map((r) => [r.scenario.id, r]));
  const table = rows
    .map(({ scenario, measured }) => `| ${scenario.name} | ${usd(costPerMillion(measured).total)} |`)
    .join('\n');
  let monthlyRequests = 0;
  let monthlyCost = 0;
  const mix = Object.entries(DAILY_MIX).flatMap(([id, { perDay, what }]) => {
    const row = byId.get(id);
    if (!row) return [];
    const requests = perDay * 30 * INTEGRATIONS;
    const cost = (requests / 1e6) * costPerMillion(row.measured).total;
    monthlyRequests += requests;
    monthlyCost += cost;
    return [`| ${perDay.toLocaleString('en-US')} ${what} | ${(requests / 1e6).toFixed(2)} M | ${usd(cost)} |`];
  });
  const metrics = METRICS_IN_USE * PRICES.cloudWatch.metricPerMonth;
  const waf = PRICES.waf.perWebAclMonth + 2 * PRICES.waf.perRuleMonth;
  const total = monthlyCost + metrics + waf + IDLE_PER_MONTH;
  return [
    COST_BEGIN,
    `Per million requests of each endpoint, from the last full \`npm run bench\` (${PRICES.region} list prices of ${PRICES.asOf}, bench/prices.ts; the`,
    'breakdown by API Gateway and WAF, Lambda, DynamoDB, logs and transfer is in [performance.md](performance.md#cost-per-million-requests)):',
    '',
    '| endpoint | $ per million |',
    '|---|---|',
    table,
    '',
    `**Worked example**: a store of ${PRODUCTS.toLocaleString('en-US')} products with ${INTEGRATIONS} integrations, each of which, per day:`,
    '',
    '| per integration and day | requests a month (all) | $ a month |',
    '|---|---|---|',
    ...mix,
    `| EMF metrics (${METRICS_IN_USE} × $${PRICES.cloudWatch.metricPerMonth}) | | ${usd(metrics)} |`,
    `| the web ACL (on by default) and its 2 rules | | ${usd(waf)} |`,
    `| at idle (alarms, KMS key, long polls, storage; above) | | ${usd(IDLE_PER_MONTH)} |`,
    `| **total** | ${(monthlyRequests / 1e6).toFixed(2)} M | **${usd(total)}** |`,
    '',
    `About $${usd(total / (monthlyRequests / 1e6))} per million requests for this mix, the monthly fixed costs included. The catalog's storage (${PRODUCTS.toLocaleString('en-US')} products with`,
    'their name postings, some 30 MB) costs cents. Webhook deliveries are extra: 3 SQS requests and a KMS',
    'Decrypt per attempt ($1.20 + $3 per million), a few DynamoDB writes, and the signer Lambda.',
    COST_END,
  ].join('\n');
}

/** Replaces the cost section of docs/deploy.md (between the markers) with `section`. */
export function writeDeployCost(section: string, file = 'docs/deploy.md'): void {
  const text = readFileSync(file, 'utf8');
  const from = text.indexOf(COST_BEGIN);
  const to = text.indexOf(COST_END);
  if (from < 0 || to < from) throw new Error(`${file} has no cost section markers (${COST_BEGIN} … ${COST_END})`);
  writeFileSync(file, text.slice(0, from) + section + text.slice(to + COST_END.length));
}
