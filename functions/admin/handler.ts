import { commandNames, findCommand } from './commands.ts';
import { DomainError } from '#domain/errors.ts';
import { errorFields, log, withLogFields } from '#shared/log.ts';
import { newContext } from '#shared/context.ts';

export interface AdminEvent {
  command: string;
  args?: Record<string, unknown>;
}

export type AdminResult =
  | { ok: true; data: unknown }
  | { ok: false; error: { code: string; message: string; field: string | null } };

/**
 * The admin Lambda: invoked by the admin CLI (in-process locally, Lambda Invoke in AWS), never
 * exposed through API Gateway. Errors come back as data so the CLI can print one clear line.
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
    return { ok: true, data: await withLogFields(ctx.log, () => command(ctx, event.args ?? {})) };
  } catch (err) {
    if (err instanceof DomainError)
      return { ok: false, error: { code: err.code, message: err.message, field: err.field } };
    log('error', 'admin command failed', { command: event.command, ...errorFields(err) });
    return { ok: false, error: { code: 'internal_error', message: (err as Error).message, field: null } };
  }
}
