import { newContext } from '#shared/context.ts';
import { randomBytes, randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { startAuthorization } from '#app/oauth/authorize.ts';
import type { FetchClientMetadata } from '#app/oauth/register.ts';
import { handler as admin } from '#functions/admin/handler.ts';
import { adminCommand } from '#fixtures/api.ts';
import { API_BASE_PATH } from '#http/api-routes.ts';
import { generateApprovalCode } from '#domain/oauth/oauth.ts';
import { config } from '#shared/config.ts';
import { createHash } from 'node:crypto';

/**
 * `oauth requests` a page at a time (docs/oauth.md#the-flow): the requests are made in-process
 * (from addresses of the test's own, so no bound of the shared stack is spent), then listed
 * through the admin handler with `--limit` and `--cursor`.
 */
const REDIRECT = 'http://127.0.0.1:9/callback';
const freshIp = () =>
  `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}::${randomInt(1, 65535).toString(16)}`;
const documentClient: FetchClientMetadata = async (clientId) => ({
  ok: true,
  client: { client_id: clientId, client_name: 'Paging client', redirect_uris: [REDIRECT] },
});
const authorizeQuery = {
  response_type: 'code',
  client_id: 'https://paging.example/client.json',
  redirect_uri: REDIRECT,
  code_challenge: createHash('sha256').update('v'.repeat(43)).digest('base64url'),
  code_challenge_method: 'S256',
  scope: 'catalog:read',
};

describe('oauth requests, a page at a time', () => {
  it('pages oauth requests newest first with next_cursor, every request once', async () => {
    // The list shows no approval codes (docs/oauth.md#approving-safely): each request is told apart
    // by the address that opened it, a fresh one each.
    const made: string[] = [];
    const base = Date.now();
    for (let n = 0; n < 5; n++) {
      const out = await startAuthorization(
        newContext(),
        authorizeQuery,
        'https://oauth-paging.example',
        API_BASE_PATH,
        // A few ms apart: the list orders by expiry, and ours must not tie.
        base + n * 5,
        documentClient,
        { ip: (made[n] = freshIp()), userAgent: null, limits: config().oauthLimits },
      );
      if (out.kind !== 'waiting') throw new Error(out.kind);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 1000; pages++) {
      const page: { data: { ip: string | null }[]; next_cursor: string | null } = await adminCommand('oauth requests', {
        limit: '2',
        ...(cursor ? { cursor } : {}),
      });
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((r) => String(r.ip)));
      cursor = page.next_cursor;
      if (cursor === null) break;
    }
    // Other files' requests share the list (and many an address): ours are each seen exactly once,
    // newest first, as they were made one after another.
    const ours = seen.filter((ip) => made.includes(ip));
    expect(ours).toEqual([...made].reverse());
  });

  it('refuses a cursor it did not give', async () => {
    const out = await admin({ command: 'oauth requests', args: { cursor: `x#${generateApprovalCode()}` } });
    expect(out).toMatchObject({ ok: false, error: { code: 'validation_failed', field: 'cursor' } });
  });
});
