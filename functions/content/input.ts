import { validationFailed } from '../../shared/domain/errors.ts';
import { EXTERNAL_ID_RULE, externalIdFromPath, isExternalId } from '../../shared/domain/external-id.ts';
import type { Principal } from '../../shared/domain/principal.ts';

/** What the content operations need of the caller: the key (external ids are its own) and its store. */
export type ContentCaller = Pick<Principal, 'keyId' | 'storeId'>;

/** A page's external id as given (MCP argument, or a path segment already decoded), or 422 (CONTRACT §5). */
export function checkedExternalId(value: unknown): string {
  if (!isExternalId(value)) throw validationFailed('external_id', `external_id must be ${EXTERNAL_ID_RULE}`);
  return value;
}

/**
 * The `{external_id}` path segment: API Gateway REST passes it still encoded, the local gateway
 * decoded; `externalIdFromPath` accepts both. An undecodable one is passed on to fail the check.
 */
export function externalIdFromPathParameters(pathParameters: Record<string, string>): string {
  return externalIdFromPath(pathParameters.external_id) ?? pathParameters.external_id ?? '';
}
