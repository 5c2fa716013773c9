import type { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { cancellationReasons, isConditionalCheckFailed } from '../core/helpers.ts';

/** One action of a TransactWriteItems. */
export type TransactWriteItem = NonNullable<
  ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']
>[number];

/** DynamoDB's TTL (seconds since the epoch) of a time in milliseconds. */
export const ttlOf = (ms: number) => Math.ceil(ms / 1000);

/** A conditional write's outcome: written, or refused with a reason code per action (one for a single write). */
export type WriteOutcome = { ok: true } | { ok: false; reasons: (string | undefined)[] };

/**
 * Runs a conditional write (a Put, an Update or a TransactWriteItems) and answers a refusal as a
 * value: a condition that failed, or a transaction cancelled by one (or by a conflicting write),
 * with the reason codes DynamoDB gave per action (`ConditionalCheckFailed`, `None` for those that
 * passed). Anything else is thrown.
 */
export async function conditionalWrite(write: () => Promise<unknown>): Promise<WriteOutcome> {
  try {
    await write();
    return { ok: true };
  } catch (err) {
    if (isConditionalCheckFailed(err)) return { ok: false, reasons: ['ConditionalCheckFailed'] };
    const reasons = cancellationReasons(err);
    if (reasons) return { ok: false, reasons: reasons.map((r) => r.Code) };
    throw err;
  }
}
