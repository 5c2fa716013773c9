import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseUrl, createKey, createStore } from '#fixtures/api.ts';
import { seedDemoCatalog } from '#emulation/local/seed.ts';

/**
 * docs/mcp.md's "An agent session" as written: every message of its block is posted, as the demo
 * key of `npm start` would post it, to a store holding the demo catalog under a key of its own,
 * and every plain value its abbreviated answers show (`"result":"would_update"`, `"id":2`,
 * `"message":"price: must be at least 0"`) is in the real answer. A walkthrough that names a
 * product the demo key cannot see fails here.
 */
const DOC = path.resolve(import.meta.dirname, '../../docs/mcp.md');

interface Step {
  message: Record<string, unknown>;
  /** `"name":value` pairs of the answer as the doc shows it, values that are not abbreviated. */
  shown: [string, unknown][];
}

function sessionSteps(markdown: string): Step[] {
  const section = markdown.slice(markdown.indexOf('## An agent session'));
  const block = /```jsonc\n([\s\S]*?)```/.exec(section)![1]!;
  const steps: Step[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('{')) steps.push({ message: JSON.parse(line), shown: [] });
    else if (line.startsWith('//') && !line.startsWith('// →') && steps.length > 0)
      for (const m of line.matchAll(/"(\w+)":("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)/g))
        if (!m[2]!.includes('…')) steps.at(-1)!.shown.push([m[1]!, JSON.parse(m[2]!)]);
  }
  return steps;
}

/** Whether `name: value` occurs anywhere in `doc`. */
function holds(doc: unknown, name: string, value: unknown): boolean {
  if (Array.isArray(doc)) return doc.some((d) => holds(d, name, value));
  if (typeof doc !== 'object' || doc === null) return false;
  return Object.entries(doc).some(([k, v]) => (k === name && v === value) || holds(v, name, value));
}

describe('docs/mcp.md: an agent session', () => {
  it('runs as written with the demo key on the demo catalog, each answer holding what the doc shows', {
    timeout: 120_000,
  }, async () => {
    const steps = sessionSteps(readFileSync(DOC, 'utf8'));
    const calls = steps.filter((s) => s.message.method === 'tools/call');
    expect(calls.length).toBeGreaterThanOrEqual(5);
    const store = await createStore();
    const key = await createKey(store);
    await seedDemoCatalog(store, key.id);
    for (const step of steps) {
      const res = await fetch(`${baseUrl()}/mcp`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${key.token}`,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2025-11-25',
        },
        body: JSON.stringify(step.message),
      });
      const what = JSON.stringify(step.message);
      if (!('id' in step.message)) {
        expect(res.status, what).toBe(202);
        continue;
      }
      expect(res.status, what).toBe(200);
      const answer = (await res.json()) as Record<string, unknown>;
      for (const [name, value] of step.shown)
        expect(holds(answer, name, value), `${what}: "${name}":${value}`).toBe(true);
    }
  });
});
