import { parse } from '../../../shared/domain/validation.ts';
import type { RouteFn } from '../../../shared/http/http-handler.ts';
import type { Principal } from '../../../shared/domain/principal.ts';
import { upsertCategory as saveCategory, type Category } from '../../../shared/db/taxonomy.repo.ts';
import { CategoryBody } from '../../../shared/domain/product/taxonomy.ts';
import { externalIdParam, nowIso } from '../write-input.ts';

/** Create or rename; the same name again is a 200 that writes nothing. */
export async function putCategory(principal: Pick<Principal, 'keyId' | 'storeId'>, externalId: string, body: unknown): Promise<Category> {
  const { name } = parse(CategoryBody, body ?? {});
  return saveCategory(principal.storeId, principal.keyId, externalId, name, nowIso());
}

export const upsertCategory: RouteFn = async ({ principal, pathParameters, body }) => {
  const externalId = externalIdParam(pathParameters);
  return { body: { data: await putCategory(principal, externalId, body) } };
};
