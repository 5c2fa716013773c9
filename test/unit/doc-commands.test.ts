import { describe, expect, it } from 'vitest';
import { commandsIn, documentedCommands, kindOf, NOT_RUN, SAME_AS, withoutComment } from '#fixtures/doc-commands.ts';

describe('the commands README.md and docs/ tell a user to run', () => {
  const commands = documentedCommands();

  it('are each run by a test or listed in NOT_RUN with the reason', () => {
    const unrun = commands.filter((c) => kindOf(c.text) === undefined).map((c) => `${c.where}: ${c.text}`);
    expect(unrun, 'run it in test/integration/documented-commands.test.ts, or add it to NOT_RUN').toEqual([]);
  });

  it('leave nothing in NOT_RUN or SAME_AS that the docs no longer show', () => {
    const shown = new Set(commands.map((c) => c.text));
    expect(Object.keys(NOT_RUN).filter((text) => !shown.has(text))).toEqual([]);
    expect(Object.keys(SAME_AS).filter((text) => !shown.has(text))).toEqual([]);
  });

  it('name in SAME_AS a documented command that a test runs', () => {
    const shown = new Set(commands.map((c) => c.text));
    for (const [text, runs] of Object.entries(SAME_AS)) {
      expect(shown.has(runs), `${text}: ${runs} is not documented`).toBe(true);
      expect(['start', 'admin', 'curl', 'cdk'], `${text}: ${runs} is not run`).toContain(kindOf(runs));
      expect(text in NOT_RUN, text).toBe(false);
      // The same command: its program and its command words (`webhooks events`) before any flag.
      expect(text.split(' --')[1] === undefined ? text : text.replace(/ --.*/, ''), text).toBe(
        runs.replace(/ --.*/, ''),
      );
    }
  });

  it('include the indented code blocks and the inline spans that are commands, each where it is written', () => {
    const md = [
      'Run `npm run admin -- oauth requests` first; `keys list` alone is no command, nor is `npm`.',
      'A span may go on over a line break: `npm run admin -- oauth show',
      '--code KXQ4-7MZP`, and `$ curl -s "$BASE/x"  # comment` is one too.',
      '',
      '    npm run admin -- oauth deny --code KXQ4-7MZP \\',
      '      --json',
      '    {"not": "a command"}',
      '',
      '1. A list item whose text goes on',
      '   indented `npx cdk synth` (a span, not a block):',
      '',
      '   ```',
      '   npm run admin -- oauth approve --code KXQ4-7MZP --store demo',
      '   ```',
      '',
      '       npm run admin -- webhooks events --store acme',
      '',
      '   Prose of the item, indented as its text is, and `npm start` in it.',
      '',
      '```js',
      'const s = `npm run not-a-span`;',
      '```',
    ].join('\n');
    expect(commandsIn('x.md', md)).toEqual([
      { where: 'x.md:1', text: 'npm run admin -- oauth requests' },
      { where: 'x.md:2', text: 'npm run admin -- oauth show --code KXQ4-7MZP' },
      { where: 'x.md:3', text: 'curl -s "$BASE/x"' },
      { where: 'x.md:5', text: 'npm run admin -- oauth deny --code KXQ4-7MZP --json' },
      { where: 'x.md:10', text: 'npx cdk synth' },
      { where: 'x.md:13', text: 'npm run admin -- oauth approve --code KXQ4-7MZP --store demo' },
      { where: 'x.md:16', text: 'npm run admin -- webhooks events --store acme' },
      { where: 'x.md:18', text: 'npm start' },
    ]);
  });

  it('are found in shell blocks and, in unmarked blocks, by the program; not in JSON or diagrams', () => {
    const md = [
      'Text `npm run inline` is a command in prose.',
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
      { where: 'x.md:1', text: 'npm run inline' },
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
