import type { Ability } from '#domain/key/abilities.ts';
import type { Principal } from '#domain/principal.ts';
import type { RateDecision } from '#domain/key/rate-limit.ts';

/**
 * The authorizer → handler hand-over. API Gateway passes the authorizer's `context` as flat
 * string/number/boolean values, so abilities travel comma-joined and everything is re-parsed.
 */
export interface RequestPrincipal extends Principal {
  rate: { limit: number; remaining: number; resetSeconds: number; limited: boolean };
}

export function principalToContext(principal: Principal, rate: RateDecision, missingAbility: string | null) {
  return {
    keyId: String(principal.keyId),
    storeId: principal.storeId,
    abilities: principal.abilities.join(','),
    currency: principal.currency ?? '',
    mcp: principal.mcpReadOnly ? 'read-only' : '',
    writesPerHour: String(principal.budget?.writes ?? ''),
    statusChangesPerHour: String(principal.budget?.statusChanges ?? ''),
    rateLimit: String(rate.limit),
    rateRemaining: String(rate.remaining),
    rateReset: String(rate.resetSeconds),
    rateLimited: rate.allowed ? '0' : '1',
    // A flag for the handler, which answers the 403 itself (a gateway response cannot carry RateLimit-*).
    missingAbility: missingAbility ?? '',
  };
}

export function principalFromContext(
  context: Record<string, unknown> | null | undefined,
): RequestPrincipal | undefined {
  if (!context || context.keyId === undefined || context.storeId === undefined) return undefined;
  const s = (k: string) => String(context[k] ?? '');
  return {
    keyId: Number(s('keyId')),
    storeId: s('storeId'),
    abilities: s('abilities').split(',').filter(Boolean) as Ability[],
    currency: s('currency') || null,
    ...(s('mcp') === 'read-only' ? { mcpReadOnly: true } : {}),
    ...(s('writesPerHour') || s('statusChangesPerHour')
      ? {
          budget: {
            writes: s('writesPerHour') ? Number(s('writesPerHour')) : null,
            statusChanges: s('statusChangesPerHour') ? Number(s('statusChangesPerHour')) : null,
          },
        }
      : {}),
    rate: {
      limit: Number(s('rateLimit')),
      remaining: Number(s('rateRemaining')),
      resetSeconds: Number(s('rateReset')),
      limited: s('rateLimited') === '1',
    },
  };
}
