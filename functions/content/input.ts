import { validationFailed } from '#domain/errors.ts';
import { parse, EXTERNAL_ID_RULE, externalIdFromPath, isExternalId } from '#domain/validation.ts';
import { ActionBody } from '#domain/page/page-write.ts';

/**
 * The `{external_id}` path segment of a page, or 422 naming `external_id` (docs/contract.md#limits). API
 * Gateway REST passes it still encoded, the local gateway decoded; `externalIdFromPath` accepts both.
 */
export function pageExternalId(pathParameters: Record<string, string>): string {
  const value = externalIdFromPath(pathParameters.external_id) ?? pathParameters.external_id;
  if (!isExternalId(value)) throw validationFailed('external_id', `external_id must be ${EXTERNAL_ID_RULE}`);
  return value;
}

/** Validation shared by publish and unpublish, before anything is read: the id, then the (empty) body. */
export function checkAction(pathParameters: Record<string, string>, body: unknown): string {
  const xid = pageExternalId(pathParameters);
  parse(ActionBody, body ?? {});
  return xid;
}
