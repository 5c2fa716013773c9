import { describe, expect, it } from 'vitest';
import {
  audienceCovers,
  checkClientMetadata,
  generateApprovalCode,
  isAcceptableRedirectUri,
  normalizeApprovalCode,
  openPair,
  parseScope,
  pkceMatches,
  redirectTarget,
  redirectUriMatches,
  requestedResource,
  resources,
  resourceWithin,
  sealPair,
} from '#domain/oauth/oauth.ts';

const ROOT = 'https://store.example.com';
const BASE = '/api/v1/integrations';

describe('OAuth pure rules', () => {
  it('checks PKCE S256 with the RFC 7636 appendix B example', () => {
    const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
    expect(pkceMatches(verifier, 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM')).toBe(true);
    expect(pkceMatches(verifier, 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN')).toBe(false);
    // `plain`: the verifier itself as the challenge is no match.
    expect(pkceMatches(verifier, verifier)).toBe(false);
  });

  it('reads an approval code however the admin types it, and nothing that cannot be one', () => {
    const code = generateApprovalCode();
    expect(code).toMatch(/^[A-Z2-9]{4}-[A-Z2-9]{4}$/);
    expect(normalizeApprovalCode(code.toLowerCase().replace('-', ''))).toBe(code);
    expect(normalizeApprovalCode('ABCD-EFG0')).toBeUndefined();
    expect(normalizeApprovalCode('ABCD-EFGHJ')).toBeUndefined();
  });

  it('lets a token for the API base be used on the MCP endpoint, not the other way round', () => {
    expect(audienceCovers('/api/v1/integrations', '/api/v1/integrations/mcp')).toBe(true);
    expect(audienceCovers('/api/v1/integrations/mcp', '/api/v1/integrations/mcp')).toBe(true);
    expect(audienceCovers('/api/v1/integrations/mcp', '/api/v1/integrations/products')).toBe(false);
    expect(audienceCovers('/api/v1/integrations/mcp', '/api/v1/integrations/mcpx')).toBe(false);
  });

  it('takes scopes that are abilities only, all six by default', () => {
    expect(parseScope(undefined)).toHaveLength(6);
    expect(parseScope('catalog:read orders:read')).toEqual(['catalog:read', 'orders:read']);
    expect(parseScope('catalog:read admin')).toBeUndefined();
  });

  it('accepts https redirect URIs and http only on loopback, never with a fragment', () => {
    expect(isAcceptableRedirectUri('https://claude.ai/api/mcp/auth_callback')).toBe(true);
    expect(isAcceptableRedirectUri('http://127.0.0.1:33418/callback')).toBe(true);
    expect(isAcceptableRedirectUri('http://example.com/callback')).toBe(false);
    expect(isAcceptableRedirectUri('https://example.com/cb#x')).toBe(false);
  });

  it('accepts offline_access in scope and ignores it: refresh tokens come with every grant', () => {
    expect(parseScope('offline_access catalog:read')).toEqual(['catalog:read']);
    expect(parseScope('catalog:read offline_access orders:read')).toEqual(['catalog:read', 'orders:read']);
    // Alone it asks for nothing more than an absent scope does.
    expect(parseScope('offline_access')).toHaveLength(6);
    expect(parseScope('offline_access admin')).toBeUndefined();
  });

  it("accepts an app's own scheme (RFC 8252 §7.1) as the hosts use them, with or without an authority", () => {
    for (const uri of [
      'cursor://anysphere.cursor-mcp/oauth/callback',
      'vscode://vscode.github-authentication/did-authenticate',
      'com.example.app:/oauth2redirect/example-provider',
      'com.example.app://callback?x=1',
    ])
      expect(isAcceptableRedirectUri(uri), uri).toBe(true);
  });

  it('refuses schemes a browser handles itself, non-loopback http and fragments', () => {
    for (const uri of [
      'javascript:alert(1)',
      'JavaScript://x/%0aalert(1)',
      'data:text/html,<script>alert(1)</script>',
      'file:///etc/passwd',
      'vbscript:msgbox(1)',
      'about:blank',
      'blob:https://example.com/0b3c',
      'ws://example.com/cb',
      'http://example.com/callback',
      'http://127.0.0.1.example.com/cb',
      'cursor://anysphere.cursor-mcp/oauth/callback#x',
      'cursor://user:pw@anysphere.cursor-mcp/cb',
      'cursor:',
      'not a uri',
    ])
      expect(isAcceptableRedirectUri(uri), uri).toBe(false);
  });

  it("registers Cursor's three redirect URIs in one request", () => {
    const checked = checkClientMetadata(
      {
        client_name: 'Cursor',
        redirect_uris: [
          'cursor://anysphere.cursor-mcp/oauth/callback',
          'https://www.cursor.com/agents/mcp/oauth/callback',
          'http://localhost:8787/callback',
        ],
      },
      'oc_x',
    );
    expect(checked.ok).toBe(true);
  });

  it('matches a loopback redirect URI with any port (RFC 8252 §7.3), path and query exactly', () => {
    expect(redirectUriMatches('http://127.0.0.1:33418/callback', 'http://127.0.0.1:40123/callback')).toBe(true);
    expect(redirectUriMatches('http://127.0.0.1/', 'http://127.0.0.1:59656/')).toBe(true);
    expect(redirectUriMatches('http://127.0.0.1:33418', 'http://127.0.0.1:40123')).toBe(true);
    expect(redirectUriMatches('http://localhost:8787/callback', 'http://localhost:9000/callback')).toBe(true);
    expect(redirectUriMatches('http://[::1]:8787/cb?a=1', 'http://[::1]:1/cb?a=1')).toBe(true);
    // Path, query and host stay exact; a non-loopback URI has no port freedom.
    expect(redirectUriMatches('http://127.0.0.1:33418/callback', 'http://127.0.0.1:40123/callbackx')).toBe(false);
    expect(redirectUriMatches('http://127.0.0.1:33418/cb?a=1', 'http://127.0.0.1:40123/cb?a=2')).toBe(false);
    expect(redirectUriMatches('http://127.0.0.1:33418/', 'http://127.0.0.1:40123')).toBe(false);
    expect(redirectUriMatches('http://127.0.0.1:33418/cb', 'http://localhost:33418/cb')).toBe(false);
    expect(redirectUriMatches('http://127.0.0.1:33418/cb', 'http://127.0.0.1.evil.com:33418/cb')).toBe(false);
    expect(redirectUriMatches('https://example.com:8443/cb', 'https://example.com:9443/cb')).toBe(false);
    expect(redirectUriMatches('https://example.com/cb', 'https://example.com/cb')).toBe(true);
  });

  it('shows the admin where the code goes: the host, or the scheme and authority of an app', () => {
    expect(redirectTarget('http://127.0.0.1:9/callback')).toBe('127.0.0.1:9');
    expect(redirectTarget('cursor://anysphere.cursor-mcp/oauth/callback')).toBe('cursor://anysphere.cursor-mcp');
    expect(redirectTarget('com.example.app:/oauth2redirect')).toBe('com.example.app:');
  });

  it('takes no resource as the HTTP API, and a trailing slash as the same resource', () => {
    const [api, mcp] = resources(ROOT, BASE);
    expect(requestedResource(ROOT, BASE, undefined)).toEqual(api);
    expect(requestedResource(ROOT, BASE, `${ROOT}${BASE}/`)).toEqual(api);
    expect(requestedResource(ROOT, BASE, `${ROOT}${BASE}/mcp/`)).toEqual(mcp);
    expect(requestedResource(ROOT, BASE, `${ROOT}${BASE}//`)).toBeUndefined();
    expect(requestedResource(ROOT, BASE, `${ROOT}/other`)).toBeUndefined();
  });

  it("lets a token request name the grant's resource or the MCP endpoint under it, never wider", () => {
    const [api, mcp] = resources(ROOT, BASE);
    expect(resourceWithin(ROOT, BASE, api!, undefined)).toEqual(api);
    expect(resourceWithin(ROOT, BASE, api!, mcp!.resource)).toEqual(mcp);
    expect(resourceWithin(ROOT, BASE, api!, `${api!.resource}/`)).toEqual(api);
    expect(resourceWithin(ROOT, BASE, mcp!, mcp!.resource)).toEqual(mcp);
    expect(resourceWithin(ROOT, BASE, mcp!, api!.resource)).toBeUndefined();
    expect(resourceWithin(ROOT, BASE, api!, 'https://evil.example.com/api/v1/integrations')).toBeUndefined();
  });

  it("seals a rotated refresh token's successor pair so that only that token opens it", () => {
    const rotated = `sir_${'a'.repeat(43)}`;
    const pair = { access_token: 'sio_x', refresh_token: 'sir_y', access_expires_at: 1 };
    const sealed = sealPair(rotated, pair);
    expect(sealed).not.toContain('sir_y');
    expect(openPair(rotated, sealed)).toEqual(pair);
    expect(openPair(`sir_${'b'.repeat(43)}`, sealed)).toBeUndefined();
    expect(openPair(rotated, 'garbage')).toBeUndefined();
  });
});
