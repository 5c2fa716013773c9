import { describe, expect, it } from 'vitest';
import {
  audienceCovers,
  generateApprovalCode,
  isAcceptableRedirectUri,
  normalizeApprovalCode,
  parseScope,
  pkceMatches,
} from '#domain/oauth/oauth.ts';

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
});
