import * as v from 'valibot';
import { parse } from '#domain/validation.ts';
import { reindexProductNames } from '#app/product-writes.ts';
import { requireStore } from '#app/stores.ts';
import { isRefused } from '#domain/outcome.ts';
import type { AdminCommand } from './commands.ts';
import { StoreIdArg } from './args.ts';

/** Catalog upkeep an operator runs, never an integrator. */
export const productCommands: Record<string, AdminCommand> = {
  'products reindex-names': async (ctx, args) => {
    const { store } = parse(v.strictObject({ store: StoreIdArg }), args);
    const found = await requireStore(ctx, store);
    return isRefused(found) ? found : reindexProductNames(ctx, store);
  },
};
