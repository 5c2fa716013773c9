import type { RequestContext } from '#shared/context.ts';
import { countWrite } from '#db/key/write-budget.repo.ts';
import type { Principal } from '#domain/principal.ts';
import { refused, type Refused } from '#domain/outcome.ts';

const HOUR_MS = 3_600_000;

/**
 * Spends one write of the key's hourly budget (docs/api.md#write-budget) before a write runs, or
 * answers the refusal, 429 `write_budget_exceeded` with Retry-After until the clock hour ends, for
 * the surface to present instead of running the write (undefined: spent, go on). A key
 * without a budget costs nothing here (not a round trip); one with a budget costs one UpdateItem.
 * A status change counts against both limits.
 */
export async function spendWriteBudget(
  ctx: RequestContext,
  principal: Principal,
  statusChange: boolean,
  nowMs = Date.now(),
): Promise<Refused | undefined> {
  const budget = principal.budget;
  if (!budget) return;
  const limits = { writes: budget.writes, statusChanges: statusChange ? budget.statusChanges : null };
  if (limits.writes === null && limits.statusChanges === null) return;
  const hourStart = nowMs - (nowMs % HOUR_MS);
  if (await countWrite(ctx, principal.keyId, hourStart, limits)) return;
  const retryAfter = Math.max(1, Math.ceil((hourStart + HOUR_MS - nowMs) / 1000));
  const spent = [
    limits.writes === null ? null : `${limits.writes} writes`,
    limits.statusChanges === null ? null : `${limits.statusChanges} status changes`,
  ]
    .filter(Boolean)
    .join(' / ');
  return refused(
    'write_budget_exceeded',
    `This key's write budget (${spent} per hour) is spent for this hour; try again in ${retryAfter} s.`,
    null,
    retryAfter,
  );
}
