import { validate, validateExternalId } from '#domain/validation.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { problemResult } from '#http/error-status.ts';
import { etag, writeCondition } from '#http/conditional.ts';
import { savePage as savePageOf } from '#app/pages.ts';
import { PageBody, sanitizedBody } from '#domain/page/page-write.ts';
import { contentChecksum } from '#domain/page/checksum.ts';
import { preconditionFailed } from '#domain/product/checksum.ts';
import { isRefused } from '#domain/outcome.ts';

/** PUT /content/pages/{external_id}: the body is validated and sanitized before anything is read; If-Match / If-None-Match: * hold it to a draft. */
export const savePage: RouteFn = async (ctx, { principal, pathParameters, body, headers }) => {
  const xid = validateExternalId(pathParameters);
  if (isRefused(xid)) return problemResult(xid);
  const content = validate(PageBody, body ?? {});
  if (isRefused(content)) return problemResult(content);
  const condition = writeCondition(headers);
  if (isRefused(condition)) return problemResult(condition);
  const clean = await sanitizedBody(content.body);
  // The body's own refusal, or what the save answered.
  const saved = isRefused(clean)
    ? clean
    : await savePageOf(ctx, principal, xid, { ...content, body: clean }, condition);
  if (isRefused(saved)) return problemResult(saved);
  if ('result' in saved) return problemResult(preconditionFailed(saved.header));
  // The answer shows the draft version: its ETag is the draft's checksum.
  return { body: saved, headers: { ETag: etag(contentChecksum(saved.data)) } };
};
