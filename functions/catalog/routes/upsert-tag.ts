import { parse, externalIdParam } from '#domain/validation.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { putTag } from '#app/taxonomy.ts';
import { TagBody } from '#domain/product/taxonomy.ts';

/** PUT /catalog/tags/{external_id}: create or change the value; status labels are refused (422 reserved_tag_value, field `value`). */
export const upsertTag: RouteFn = async ({ principal, pathParameters, body }) => {
  const externalId = externalIdParam(pathParameters);
  const { value } = parse(TagBody, body ?? {});
  return { body: { data: await putTag(principal, externalId, value) } };
};
