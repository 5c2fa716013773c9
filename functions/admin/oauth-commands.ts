import { isRefused, refused } from '#domain/outcome.ts';
import * as v from 'valibot';
import {
  approveAuthorization,
  denyAuthorization,
  listAuthorizationRequests,
  showAuthorization,
} from '#app/oauth/decisions.ts';
import { parseAbilities } from '#domain/key/abilities.ts';
import { validate } from '#domain/validation.ts';
import { isRequestCursor } from '#domain/oauth/oauth.ts';
import { IntegerArg, McpArg, StoreIdArg } from './args.ts';
import type { AdminCommand } from './commands.ts';

const Code = v.pipe(v.string(), v.trim(), v.minLength(1, 'is required'), v.maxLength(20));

/**
 * The store admin's side of an OAuth authorization (docs/oauth.md#approving-safely): list who is
 * asking, newest first (no approval codes: the list is no way to approve); show what the approval
 * code the user reads out from their own screen asks for; approve it, choosing the store, the
 * abilities (no wider than asked), the MCP mode and a write budget; or deny it.
 */
export const oauthCommands: Record<string, AdminCommand> = {
  // A page at a time, newest first; `next_cursor` continues it (null on the last page).
  'oauth requests': async (ctx, args) => {
    const a = validate(
      v.strictObject({
        limit: v.optional(IntegerArg(1, 100), 50),
        cursor: v.optional(v.pipe(v.string(), v.check(isRequestCursor, 'is not a cursor of oauth requests'))),
      }),
      args,
    );
    if (isRefused(a)) return a;
    return listAuthorizationRequests(ctx, Date.now(), { limit: a.limit, cursor: a.cursor ?? null });
  },
  'oauth show': async (ctx, args) => {
    const a = validate(v.strictObject({ code: Code }), args);
    if (isRefused(a)) return a;
    return showAuthorization(ctx, a.code, Date.now());
  },
  'oauth approve': async (ctx, args) => {
    const a = validate(
      v.strictObject({
        code: Code,
        store: StoreIdArg,
        abilities: v.optional(v.string()),
        mcp: v.optional(McpArg),
        writes_per_hour: v.optional(IntegerArg(1, 1_000_000)),
      }),
      args,
    );
    if (isRefused(a)) return a;
    const abilities = a.abilities === undefined ? undefined : parseAbilities(a.abilities);
    if (abilities?.ok === false) return refused('validation_failed', abilities.message, 'abilities');
    return approveAuthorization(
      ctx,
      {
        code: a.code,
        storeId: a.store,
        abilities: abilities?.value,
        mcp: a.mcp ?? 'full',
        writesPerHour: a.writes_per_hour ?? null,
      },
      Date.now(),
    );
  },
  'oauth deny': async (ctx, args) => {
    const a = validate(v.strictObject({ code: Code }), args);
    if (isRefused(a)) return a;
    return denyAuthorization(ctx, a.code, Date.now());
  },
};
