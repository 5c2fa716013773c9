import type { RequestContext } from '#shared/context.ts';
import { getStore, type Store } from '#db/store/repo.ts';
import { DomainError } from '#domain/errors.ts';

/** The store an admin command names, or 404 naming the `store` argument. */
export async function requireStore(ctx: RequestContext, storeId: string): Promise<Store> {
  const store = await getStore(ctx, storeId);
  if (!store) throw new DomainError('not_found', `store "${storeId}" does not exist`, 'store');
  return store;
}
