import { isConditionalCheckFailed } from '../core/helpers.ts';

/** DynamoDB's TTL (seconds since the epoch) of a time in milliseconds. */
export const ttlOf = (ms: number) => Math.ceil(ms / 1000);

/**
 * Runs one conditional write (a PutItem or an UpdateItem) and answers whether its condition held:
 * false when it did not; anything else is thrown. A write of several items is a NamedTransaction
 * (shared/db/core/helpers.ts), whose refusals are read by name.
 */
export async function conditionalWrite(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (err) {
    if (isConditionalCheckFailed(err)) return false;
    throw err;
  }
}
