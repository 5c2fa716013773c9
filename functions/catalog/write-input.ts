import { DomainError, validationFailed } from '../../shared/domain/errors.ts';
import { EXTERNAL_ID_RULE, externalIdFromPath } from '../../shared/domain/external-id.ts';
import type { WriteTargets } from '../../shared/db/product.repo.ts';

/** The `{external_id}` of a catalog path, or 422 naming `external_id` (CONTRACT §5). */
export function externalIdParam(pathParameters: Record<string, string>): string {
  const id = externalIdFromPath(pathParameters.external_id);
  if (id === undefined) throw validationFailed('external_id', `external_id must be ${EXTERNAL_ID_RULE}`);
  return id;
}

/** 422 `unknown_reference` naming the array element, e.g. `category_external_ids[1]`. */
export function assertReferencesExist(targets: WriteTargets, categoryIds: string[] = [], tagIds: string[] = []): void {
  const missing = targets.missing;
  if (!missing) return;
  const list = missing.list === 'category' ? 'category_external_ids' : 'tag_external_ids';
  const value = (missing.list === 'category' ? categoryIds : tagIds)[missing.index];
  throw new DomainError('unknown_reference',
    `No ${missing.list} with external id ${value} exists for this key (create it with PUT /catalog/${missing.list === 'category' ? 'categories' : 'tags'}/${value} first).`,
    `${list}[${missing.index}]`,
  );
}

export const nowIso = () => new Date().toISOString();
