import { externalIdParam, parse } from '#domain/validation.ts';
import { ActionBody } from '#domain/page/page-write.ts';

/** Validation shared by publish and unpublish, before anything is read: the id, then the (empty) body. */
export function checkAction(pathParameters: Record<string, string>, body: unknown): string {
  const xid = externalIdParam(pathParameters);
  parse(ActionBody, body ?? {});
  return xid;
}
