import { describe, expect, it } from 'vitest';
import { commandsIn, documentedCommands, kindOf, NOT_RUN, withoutComment } from '#fixtures/doc-commands.ts';

describe('the commands README.md and docs/ tell a user to run', () => {
  const commands = documentedCommands();

  it('are each run by a test or listed in NOT_RUN with the reason', () => {
    const unrun = commands.filter((c) => kindOf(c.text) === undefined).map((c) => `${c.where}: ${c.text}`);
    expect(unrun, 'run it in test/integration/documented-commands.test.ts, or add it to NOT_RUN').toEqual([]);
  });

  it('leave nothing in NOT_RUN that the docs no longer show', () => {
    const shown = new Set(commands.map((c) => c.text));
    expect(Object.keys(NOT_RUN).filter((text) => !shown.has(text))).toEqual([]);
  });

  it('are found in shell blocks and, in unmarked blocks, by the program; not in JSON or diagrams', () => {
    const md = [
      'Text `npm run inline` is prose.',
      '```sh',
      'KEY=sia_...   # printed by npm start',
      '$ curl -X PUT -H "A: b" \\',
      '  -d \'{"a":"#1"}\' \\',
      '  "$BASE/x"   # a comment',
      '# only a comment',
      '',
      '```',
      '```',
      'npm run admin -- keys list --store acme      # the keys',
      'bin/  infra/    (a diagram)',
      'GET /api/v1/integrations/events?cursor=41',
      '```',
      '```json',
      '{ "command": "npx", "args": ["curl x"] }',
      'npm inside json',
      '```',
    ].join('\n');
    expect(commandsIn('x.md', md)).toEqual([
      { where: 'x.md:3', text: 'KEY=sia_...' },
      { where: 'x.md:4', text: 'curl -X PUT -H "A: b" -d \'{"a":"#1"}\' "$BASE/x"' },
      { where: 'x.md:11', text: 'npm run admin -- keys list --store acme' },
    ]);
  });

  it('keep a # inside quotes or a word, and drop a comment', () => {
    expect(withoutComment(`curl "$BASE/a#b" -d '# no' # yes`)).toBe(`curl "$BASE/a#b" -d '# no' `);
    expect(withoutComment('echo a#b')).toBe('echo a#b');
  });
});
