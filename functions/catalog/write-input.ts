import { validationFailed } from '#domain/errors.ts';
import { EXTERNAL_ID_RULE, externalIdFromPath } from '#domain/external-id.ts';

/** The `{external_id}` of a catalog path, or 422 naming `external_id` (docs/contract.md#limits). */
export function externalIdParam(pathParameters: Record<string, string>): string {
  const id = externalIdFromPath(pathParameters.external_id);
  if (id === undefined) throw validationFailed('external_id', `external_id must be ${EXTERNAL_ID_RULE}`);
  return id;
}
