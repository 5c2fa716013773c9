import { validate, validateExternalId } from '#domain/validation.ts';
import { ActionBody } from '#domain/page/page-write.ts';
import { isRefused, type Refused } from '#domain/outcome.ts';

/** Validation shared by publish and unpublish, before anything is read: the id, then the (empty) body. */
export function checkAction(pathParameters: Record<string, string>, body: unknown): string | Refused {
  const xid = validateExternalId(pathParameters);
  if (isRefused(xid)) return xid;
  const checked = validate(ActionBody, body ?? {});
  return isRefused(checked) ? checked : xid;
}
