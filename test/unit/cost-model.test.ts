import { describe, expect, it } from 'vitest';
import { marshall } from '@aws-sdk/util-dynamodb';
import { itemSize } from '../../bench/billing-units.ts';
import { costPerMillion } from '../../bench/cost-model.ts';
import { PRICES } from '../../bench/prices.ts';

describe('cost model (bench)', () => {
  it('sizes an item as DynamoDB bills it, marshalled or not', () => {
    const item = {
      pk: 'STORE#a',
      sk: 'PRODUCT#000000000001',
      name: 'Oak chair',
      price: 1999,
      tags: ['a', 'bc'],
      meta: { on: true, none: null },
    };
    // names + values: pk 2+7, sk 2+20, name 4+9, price 5+(2+1), tags 4+(3+1+1+1+2), meta 4+(3+1+2+1+1+4+1)
    expect(itemSize(item)).toBe(9 + 22 + 13 + 8 + 12 + 17);
    expect(itemSize(marshall(item) as never)).toBe(itemSize(item));
  });

  it('prices a request from its units, invocations, milliseconds, log and answer bytes', () => {
    const zero = { rru: 0, wru: 0, invocations: 0, lambdaMs: 0, logBytes: 0, logLines: 0, responseBytes: 0 };
    const base = costPerMillion(zero);
    expect(base.total).toBeCloseTo(
      PRICES.apiGateway.restPerMillion +
        PRICES.waf.perMillionRequests +
        PRICES.xray.sampledFraction * PRICES.xray.perMillionTracesRecorded,
      6,
    );
    expect(costPerMillion({ ...zero, wru: 1 }).dynamodb).toBeCloseTo(PRICES.dynamodb.perMillionWriteUnits, 6);
    expect(costPerMillion({ ...zero, rru: 0.5 }).dynamodb).toBeCloseTo(PRICES.dynamodb.perMillionReadUnits / 2, 6);
    // 1,000 ms at 512 MB = 0.5 GB-s a request.
    expect(costPerMillion({ ...zero, lambdaMs: 1000 }).lambda).toBeCloseTo(0.5 * 1e6 * PRICES.lambda.perGbSecond, 6);
    // A GB of logs a million requests.
    expect(costPerMillion({ ...zero, logBytes: 1024 ** 3 / 1e6 }).logs).toBeCloseTo(
      PRICES.cloudWatch.logsIngestionPerGb,
      6,
    );
  });
});
