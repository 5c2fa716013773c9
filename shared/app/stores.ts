import type { RequestContext } from '#shared/context.ts';
import { getStore, type Store } from '#db/store/repo.ts';
import { refused, type Refused } from '#domain/outcome.ts';

/** The store an admin command names, or its refusal: 404 naming the `store` argument. */
export async function requireStore(ctx: RequestContext, storeId: string): Promise<Store | Refused> {
  return (await getStore(ctx, storeId)) ?? refused('not_found', `store "${storeId}" does not exist`, 'store');
}
