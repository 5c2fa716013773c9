import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_ROUTES } from '#http/api-routes.ts';
import { bindTools } from '#functions/mcp/server.ts';

/**
 * docs/mcp.md's tool table is what a client author reads before calling tools/list: each row names a
 * tool the server binds, the endpoint it runs and the ability it needs, and no tool is left out.
 */
const root = path.resolve(import.meta.dirname, '../..');

function documentedTools(): string[] {
  const text = readFileSync(path.join(root, 'docs', 'mcp.md'), 'utf8');
  const section = text.slice(text.indexOf('\n## Tools\n'));
  const table = section.slice(0, section.indexOf('\n\n', section.indexOf('| tool |')));
  return [...table.matchAll(/^\| `(\w+)` \| (\w+) (\S+) \| ([^|]+) \|/gm)].map(
    ([, name, method, route, ability]) => `${name} ${method} ${route} ${ability!.trim()}`,
  );
}

function servedTools(): string[] {
  return [...bindTools().values()].map(({ tool, abilities }) => {
    const route = API_ROUTES.find((r) => r.operation === tool.operation)!;
    const ability = route.ability ?? `any of ${abilities.join(', ')}`;
    return `${tool.name} ${route.method} ${route.path} ${ability}`;
  });
}

describe('docs/mcp.md', () => {
  it("lists every tool the server binds, with the tool's endpoint and ability", () => {
    expect(servedTools().length).toBeGreaterThan(10);
    expect(documentedTools().sort()).toEqual(servedTools().sort());
  });
});
