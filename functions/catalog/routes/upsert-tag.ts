import { parse } from '../../../shared/domain/validation.ts';
import type { RouteFn } from '../../../shared/http/http-handler.ts';
import type { Principal } from '../../../shared/domain/principal.ts';
import { upsertTag as saveTag, type Tag } from '../../../shared/db/taxonomy.repo.ts';
import { TagBody } from '../../../shared/domain/product/taxonomy.ts';
import { externalIdParam, nowIso } from '../write-input.ts';

/** Create or rename; status labels are refused (422 reserved_tag_value, field `value`). */
export async function putTag(principal: Pick<Principal, 'keyId' | 'storeId'>, externalId: string, body: unknown): Promise<Tag> {
  const { value } = parse(TagBody, body ?? {});
  return saveTag(principal.storeId, principal.keyId, externalId, value, nowIso());
}

export const upsertTag: RouteFn = async ({ principal, pathParameters, body }) => {
  const externalId = externalIdParam(pathParameters);
  return { body: { data: await putTag(principal, externalId, body) } };
};
