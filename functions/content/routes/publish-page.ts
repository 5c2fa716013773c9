import type { RouteFn } from '#http/http-handler.ts';
import { idempotent } from '#http/idempotency.ts';
import { publishPage as publish } from '#app/pages.ts';
import { checkAction } from '../input.ts';

/**
 * POST /content/pages/{external_id}/publish under an Idempotency-Key (docs/contract.md#idempotency): draft or
 * unpublished → published (stamps published_at), published → 200 no-op, unknown → 404.
 */
export const publishPage: RouteFn = (ctx, input) =>
  idempotent(ctx, input, {
    precheck: () => checkAction(input.pathParameters, input.body),
    run: (request, xid) => publish(ctx, input.principal, xid, request),
  });
