import { parse, externalIdParam } from '#domain/validation.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { problemResult } from '#http/error-status.ts';
import { isRefused } from '#domain/outcome.ts';
import { putCategory } from '#app/taxonomy.ts';
import { CategoryBody } from '#domain/product/taxonomy.ts';

/** PUT /catalog/categories/{external_id}: create or rename. */
export const upsertCategory: RouteFn = async (ctx, { principal, pathParameters, body }) => {
  const externalId = externalIdParam(pathParameters);
  const { name } = parse(CategoryBody, body ?? {});
  const category = await putCategory(ctx, principal, externalId, name);
  return isRefused(category) ? problemResult(category) : { body: { data: category } };
};
