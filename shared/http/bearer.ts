/**
 * The bearer token of a request's `Authorization` header, or undefined. The scheme name is
 * case-insensitive (RFC 9110 §11.1): `bearer`, `BEARER`. Read by the authorizer and by the MCP
 * function, which counts the tool calls the authorizer could not see (functions/mcp/allowance.ts).
 */
export function bearerToken(headers: Record<string, string | undefined> | null): string | undefined {
  const entry = Object.entries(headers ?? {}).find(([name]) => name.toLowerCase() === 'authorization');
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(entry?.[1] ?? '');
  return match?.[1];
}
