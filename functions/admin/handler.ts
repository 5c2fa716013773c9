import { commandNames, findCommand } from './commands.ts';
import { DomainError } from '#domain/errors.ts';
import { isRefused, type Refused } from '#domain/outcome.ts';
import { errorFields, log, withLogFields } from '#shared/log.ts';
import { newContext } from '#shared/context.ts';

export interface AdminEvent {
  command: string;
  args?: Record<string, unknown>;
}

export type AdminResult =
  | { ok: true; data: unknown }
  | { ok: false; error: { code: string; message: string; field: string | null } };

/** A refusal (or a thrown DomainError fault) as the admin's answer: its code, message and field. */
const failure = (problem: Refused | DomainError): AdminResult => ({
  ok: false,
  error: { code: problem.code, message: problem.message, field: problem.field },
});

/**
 * The admin Lambda: invoked by the admin CLI (in-process locally, Lambda Invoke in AWS), never
 * exposed through API Gateway. Errors come back as data so the CLI can print one clear line: a
 * command answers a caller's refusal as its value (shared/domain/outcome.ts), presented here.
 */
export async function handler(event: AdminEvent): Promise<AdminResult> {
  const command = await findCommand(event.command);
  if (!command) {
    return {
      ok: false,
      error: {
        code: 'unknown_command',
        message: `unknown command "${event.command}" (known: ${(await commandNames()).join(', ')})`,
        field: null,
      },
    };
  }
  try {
    // An admin command has no time budget: it runs until its store calls answer or fail.
    const ctx = newContext();
    const data = await withLogFields(ctx.log, () => command(ctx, event.args ?? {}));
    return isRefused(data) ? failure(data) : { ok: true, data };
  } catch (err) {
    // A fault with its own code and message (service_unavailable: a store call or the access log's
    // query did not answer in time, try again); every refusal is a returned value.
    if (err instanceof DomainError) return failure(err);
    log('error', 'admin command failed', { command: event.command, ...errorFields(err) });
    return { ok: false, error: { code: 'internal_error', message: (err as Error).message, field: null } };
  }
}
