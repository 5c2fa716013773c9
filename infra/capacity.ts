/**
 * The capacity model the stage throttle and the WAF limits are sized from (docs/deploy.md,
 * Capacity). The stage throttle is the one ceiling every tenant shares, so it is sized to hold
 * every planned key at its full allowance at once, and checked against what the Lambdas behind
 * it can hold; the per-key WAF rule bounds what one runaway key takes of it.
 */
export interface CapacityInputs {
  /** Keys expected to be active at the same time (context `plannedKeys`). */
  plannedKeys: number;
  /** The per-key allowance the authorizer enforces (context `rateLimitPerMinute`). */
  rateLimitPerMinute: number;
  /** WAF's per-Authorization-header limit (context `wafPerKeyPerMinute`). */
  wafPerKeyPerMinute: number;
  authorizerConcurrency: number;
  signerConcurrency: number;
  accountConcurrency: number;
}

/**
 * Assumed warm durations in AWS, with margin: the authorizer is one conditional UpdateItem, a
 * handler one to a few DynamoDB round trips. Assumptions, not measurements (no AWS bench exists);
 * the concurrency alarms (…Throttles) say when they are wrong.
 */
const ASSUMED_SECONDS = { authorizer: 0.05, handler: 0.25 } as const;

/** Room above the planned keys' allowance: clients retry, clocks of the windows do not line up. */
const HEADROOM = 1.5;

export interface CapacityModel {
  stageRatePerSecond: number;
  stageBurst: number;
  /** What the stage's rate needs of concurrent executions, authorizer and handlers. */
  authorizerConcurrencyNeeded: number;
  handlerConcurrencyNeeded: number;
  /** What the account leaves for handlers (unreserved, above Lambda's 100 minimum). */
  handlerConcurrencyAvailable: number;
  /** How many keys, each at WAF's per-key limit, fill the stage (the noisy-neighbour margin). */
  runawayKeysToFillStage: number;
}

export function capacityModel(i: CapacityInputs): CapacityModel {
  const perKey = i.rateLimitPerMinute / 60;
  const stageRatePerSecond = Math.max(10, Math.ceil(i.plannedKeys * perKey * HEADROOM));
  // One second of the rate at once: a burst of every key firing together, no more.
  const stageBurst = Math.max(20, stageRatePerSecond * 2);
  const handlerConcurrencyAvailable = i.accountConcurrency - i.authorizerConcurrency - i.signerConcurrency - 100;
  return {
    stageRatePerSecond,
    stageBurst,
    authorizerConcurrencyNeeded: Math.ceil(stageBurst * ASSUMED_SECONDS.authorizer),
    handlerConcurrencyNeeded: Math.ceil(stageBurst * ASSUMED_SECONDS.handler),
    handlerConcurrencyAvailable,
    runawayKeysToFillStage: Math.floor(stageRatePerSecond / (i.wafPerKeyPerMinute / 60)),
  };
}

/** Why the model does not fit the account, or null. Synthesis refuses a deployment that would throttle its own Lambdas. */
export function capacityRefusal(i: CapacityInputs, m: CapacityModel = capacityModel(i)): string | null {
  if (i.authorizerConcurrency > 0 && m.authorizerConcurrencyNeeded > i.authorizerConcurrency) {
    return `plannedKeys ${i.plannedKeys} needs a stage burst of ${m.stageBurst}/s, which needs ~${m.authorizerConcurrencyNeeded} concurrent authorizers; authorizerConcurrency is ${i.authorizerConcurrency}`;
  }
  if (m.handlerConcurrencyNeeded > m.handlerConcurrencyAvailable) {
    return `plannedKeys ${i.plannedKeys} needs ~${m.handlerConcurrencyNeeded} concurrent handlers at a burst of ${m.stageBurst}/s; accountConcurrency ${i.accountConcurrency} leaves ${m.handlerConcurrencyAvailable}`;
  }
  return null;
}
