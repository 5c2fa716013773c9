import { describe, expect, it } from 'vitest';
import { cleanCaller, cleanClientName, cleanDisplayText, nameVerifiedBy, sameDigest } from '#domain/oauth/approval.ts';
import { checkClientMetadata } from '#domain/oauth/oauth.ts';

/** What the store admin is shown of a request (docs/oauth.md#approving-safely): the pure rules. */
describe('OAuth approval: what the admin is shown', () => {
  it('drops format characters, turns control characters into spaces and collapses spaces', () => {
    expect(cleanDisplayText('Cl\u200Baude', 100)).toBe('Claude');
    // A right-to-left override makes "edualC" read as "Claude"; without it, it reads as written.
    expect(cleanDisplayText('\u202EedualC', 100)).toBe('edualC');
    expect(cleanDisplayText('\uFEFFClaude\u2060\u2066\u2069\u061C\u200E\u200F', 100)).toBe('Claude');
    expect(cleanDisplayText('Claude\napproved\t\u0007by\u2028admin\u0085', 100)).toBe('Claude approved by admin');
    expect(cleanDisplayText('  a   b  ', 100)).toBe('a b');
    expect(cleanDisplayText('Ünïcödé 名前 😀', 100)).toBe('Ünïcödé 名前 😀');
  });

  it('cuts a long name by code points, never inside a surrogate pair', () => {
    expect(cleanDisplayText('😀'.repeat(120), 100)).toBe('😀'.repeat(100));
    expect(cleanDisplayText(`${'a'.repeat(99)}😀`, 100)).toBe(`${'a'.repeat(99)}😀`);
  });

  it('names a client by its client_id when nothing visible is left of its name', () => {
    expect(cleanClientName('\u200B\u202E\u0000', 'oc_1')).toBe('oc_1');
    expect(cleanClientName(42, 'oc_1')).toBe('oc_1');
    expect(cleanClientName(' Cursor ', 'oc_1')).toBe('Cursor');
  });

  it('cleans the name of a registration and of a metadata document alike', () => {
    const out = checkClientMetadata(
      { client_name: 'Chat\u200DGPT\u202E', redirect_uris: ['https://chatgpt.com/connector/oauth/cb'] },
      'oc_x',
    );
    expect(out).toMatchObject({ ok: true, client: { client_name: 'ChatGPT' } });
  });

  it("verifies a name by the metadata document's host, and never a registration's", () => {
    expect(nameVerifiedBy('https://claude.ai/oauth/mcp-oauth-client-metadata')).toBe('claude.ai');
    expect(nameVerifiedBy('http://127.0.0.1:4000/client.json')).toBe('127.0.0.1:4000');
    expect(nameVerifiedBy('oc_0123456789abcdef0123456789abcdef')).toBeNull();
    expect(nameVerifiedBy('https://')).toBeNull();
  });

  it("keeps the caller's address and a cleaned User-Agent of at most 300 code points", () => {
    expect(cleanCaller({ ip: '203.0.113.7', userAgent: 'Evil\u202E/1.0\r\nX: y' })).toEqual({
      ip: '203.0.113.7',
      userAgent: 'Evil/1.0 X: y',
    });
    expect(cleanCaller({ ip: null, userAgent: 'x'.repeat(1000) }).userAgent).toHaveLength(300);
    expect(cleanCaller({ ip: null, userAgent: '\u200B' })).toEqual({ ip: null, userAgent: null });
  });

  it('compares digests by value, and different lengths as different', () => {
    expect(sameDigest('ab'.repeat(32), 'ab'.repeat(32))).toBe(true);
    expect(sameDigest('ab'.repeat(32), `${'ab'.repeat(31)}ac`)).toBe(false);
    expect(sameDigest('ab', 'abc')).toBe(false);
  });
});
