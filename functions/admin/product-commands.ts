import * as v from 'valibot';
import { validate } from '#domain/validation.ts';
import { reindexProductNames } from '#app/product-writes.ts';
import { requireStore } from '#app/stores.ts';
import { isRefused } from '#domain/outcome.ts';
import type { AdminCommand } from './commands.ts';
import { StoreIdArg } from './args.ts';

/** Catalog upkeep an operator runs, never an integrator. */
export const productCommands: Record<string, AdminCommand> = {
  'products reindex-names': async (ctx, args) => {
    const a = validate(v.strictObject({ store: StoreIdArg }), args);
    if (isRefused(a)) return a;
    const { store } = a;
    const found = await requireStore(ctx, store);
    return isRefused(found) ? found : reindexProductNames(ctx, store);
  },
};
