import { describe, expect, it } from 'vitest';
import { LIMIT_WINDOW_SECONDS, limitWindow, secondsLeftInWindow } from '#domain/oauth/bounds.ts';
import { checkClientMetadata, REQUEST_SECONDS } from '#domain/oauth/oauth.ts';

describe('OAuth bounds: windows', () => {
  it('counts in windows as long as a request waits, so a window bounds what it leaves pending', () => {
    expect(LIMIT_WINDOW_SECONDS).toBe(REQUEST_SECONDS);
  });

  it('puts a time in the fixed window it falls in and says how long is left of it', () => {
    const start = 1_800_000_000_000 - (1_800_000_000_000 % 600_000);
    expect(limitWindow(start)).toEqual({ startMs: start, endMs: start + 600_000 });
    expect(limitWindow(start + 599_999)).toEqual({ startMs: start, endMs: start + 600_000 });
    expect(limitWindow(start + 600_000).startMs).toBe(start + 600_000);
    expect(secondsLeftInWindow(start)).toBe(600);
    expect(secondsLeftInWindow(start + 599_999)).toBe(1);
  });
});

describe('OAuth client metadata: authentication methods and size', () => {
  const uris = ['http://127.0.0.1:9/callback'];
  it.each(['none', 'client_secret_post', 'client_secret_basic', 'client_secret_jwt', 'private_key_jwt'])(
    'takes %s and registers a public client',
    (method) => {
      const out = checkClientMetadata({ redirect_uris: uris, token_endpoint_auth_method: method }, 'oc_x');
      expect(out).toEqual({ ok: true, client: { client_id: 'oc_x', client_name: 'oc_x', redirect_uris: uris } });
    },
  );

  it('refuses a method it does not know, and one that is not a string', () => {
    for (const method of ['tls_client_auth', '', 42, null])
      expect(checkClientMetadata({ redirect_uris: uris, token_endpoint_auth_method: method }, 'oc_x').ok).toBe(false);
  });

  it('counts the redirect URIs in UTF-8 bytes: 8 KB in all', () => {
    const uri = (n: number, text: string) => `https://app.example/${n}/${text}`;
    // Five URIs of about 920 characters of a two-byte letter: 9.2 KB in UTF-8, 4,600 characters.
    const wide = Array.from({ length: 5 }, (_, n) => uri(n, 'é'.repeat(900)));
    expect(checkClientMetadata({ redirect_uris: wide }, 'oc_x')).toMatchObject({ ok: false });
    expect(checkClientMetadata({ redirect_uris: wide.slice(0, 4) }, 'oc_x')).toMatchObject({ ok: true });
  });
});
