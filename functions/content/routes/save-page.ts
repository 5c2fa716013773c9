import { parse, externalIdParam } from '#domain/validation.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { savePage as savePageOf } from '#app/pages.ts';
import { PageBody, sanitizedBody } from '#domain/page/page-write.ts';

/** PUT /content/pages/{external_id}: the body is validated and sanitized before anything is read. */
export const savePage: RouteFn = async ({ principal, pathParameters, body }) => {
  const xid = externalIdParam(pathParameters);
  const content = parse(PageBody, body ?? {});
  return { body: await savePageOf(principal, xid, { ...content, body: await sanitizedBody(content.body) }) };
};
