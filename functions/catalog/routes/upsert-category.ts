import { validate, validateExternalId } from '#domain/validation.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { problemResult } from '#http/error-status.ts';
import { isRefused } from '#domain/outcome.ts';
import { putCategory } from '#app/taxonomy.ts';
import { CategoryBody } from '#domain/product/taxonomy.ts';

/** PUT /catalog/categories/{external_id}: create or rename. */
export const upsertCategory: RouteFn = async (ctx, { principal, pathParameters, body }) => {
  const externalId = validateExternalId(pathParameters);
  if (isRefused(externalId)) return problemResult(externalId);
  const input = validate(CategoryBody, body ?? {});
  if (isRefused(input)) return problemResult(input);
  const category = await putCategory(ctx, principal, externalId, input.name);
  return isRefused(category) ? problemResult(category) : { body: { data: category } };
};
