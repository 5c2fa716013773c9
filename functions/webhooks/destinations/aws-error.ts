import type { PostResult } from '#domain/webhook/deliverable.ts';
import { AssumeRoleRefused } from './credentials.ts';

/**
 * An attempt on an SQS or EventBridge destination that AWS refused, as the delivery log shows it:
 * the AWS status (403, 400, …) and `<step>: <error code>: <AWS message>`, e.g.
 * `assume role arn:aws:iam::…:role/store-events-crm: AccessDenied: …`. Every such refusal is the
 * destination's (its role, its queue or bus, its policies): a failed attempt, retried, counted for
 * the circuit and parking like a webhook receiver's 5xx.
 */
export function refusedAttempt(step: string, err: unknown, startedMs: number): PostResult {
  const e = err as Error & { $metadata?: { httpStatusCode?: number }; code?: string };
  const status = err instanceof AssumeRoleRefused ? err.status : (e.$metadata?.httpStatusCode ?? null);
  const code = err instanceof AssumeRoleRefused ? err.code : e.name || e.code || 'Error';
  const message = (e.message || '').replace(/\s+/g, ' ').slice(0, 300);
  return {
    status: status !== null && status >= 200 && status < 300 ? null : status,
    error: `${step}: ${code}${message ? `: ${message}` : ''}`,
    retryAfterSeconds: undefined,
    ms: Date.now() - startedMs,
  };
}
