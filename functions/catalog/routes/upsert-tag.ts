import { validate, validateExternalId } from '#domain/validation.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { problemResult } from '#http/error-status.ts';
import { isRefused } from '#domain/outcome.ts';
import { putTag } from '#app/taxonomy.ts';
import { TagBody } from '#domain/product/taxonomy.ts';

/** PUT /catalog/tags/{external_id}: create or change the value; status labels are refused (422 reserved_tag_value, field `value`). */
export const upsertTag: RouteFn = async (ctx, { principal, pathParameters, body }) => {
  const externalId = validateExternalId(pathParameters);
  if (isRefused(externalId)) return problemResult(externalId);
  const input = validate(TagBody, body ?? {});
  if (isRefused(input)) return problemResult(input);
  const tag = await putTag(ctx, principal, externalId, input.value);
  return isRefused(tag) ? problemResult(tag) : { body: { data: tag } };
};
