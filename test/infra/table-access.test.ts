import { describe, expect, it } from 'vitest';
import { build } from 'esbuild';
import { TABLE_ACCESS } from '#infra/table-access.ts';
import { TABLE } from '#db/core/table.ts';
import { keys } from '#db/keys.ts';
import type { ServiceFunction } from '#infra/constructs/service-function.ts';
import { statementsOf, synthStacks } from './synth.ts';

/** The IAM actions a DynamoDB document-client command needs (a transaction: those of its items). */
const ACTION_OF: Record<string, string[]> = {
  GetCommand: ['GetItem'],
  BatchGetCommand: ['BatchGetItem'],
  QueryCommand: ['Query'],
  ScanCommand: ['Scan'],
  PutCommand: ['PutItem'],
  UpdateCommand: ['UpdateItem'],
  DeleteCommand: ['DeleteItem'],
  BatchWriteCommand: ['BatchWriteItem'],
  TransactGetCommand: ['GetItem'],
};
const TRANSACT_ITEM: Record<string, string> = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
};

/**
 * What a handler's bundle sends: esbuild drops code no handler reaches, so the commands left are
 * the ones the function can send. Transaction items are read off their `Put: {` etc. keys.
 */
async function actionsSentBy(entryPath: string) {
  const out = await build({
    entryPoints: [entryPath],
    bundle: true,
    format: 'esm',
    platform: 'node',
    write: false,
    external: ['@aws-sdk/*'],
    logLevel: 'silent',
  });
  const code = out.outputFiles[0]!.text;
  const commands = new Set([...code.matchAll(/new (\w+?Command)\d*\(/g)].map((m) => m[1]!));
  const actions = new Set<string>();
  for (const c of commands) for (const a of ACTION_OF[c] ?? []) actions.add(`dynamodb:${a}`);
  if (commands.has('TransactWriteCommand')) {
    for (const m of code.matchAll(/\b(Put|Update|Delete|ConditionCheck):\s*\{/g))
      actions.add(`dynamodb:${TRANSACT_ITEM[m[1]!]}`);
  }
  return { actions: [...actions].sort(), usesIndex: /IndexName:/.test(code) };
}

describe('Table access per function', () => {
  const { api, template } = synthStacks();
  const fns: ServiceFunction[] = [
    api.authorizerFunction,
    ...Object.values(api.functions),
    api.adminFunction,
    api.oauthFunction,
    api.webhooks.eventsFunction,
    api.webhooks.webhooksFunction,
    api.webhooks.deadLetterFunction,
    api.nameIndexer.function,
  ];
  // The stream event source's own grant (fan-out only) reads the stream, not the table's items.
  const STREAM_ACTIONS = [
    'dynamodb:DescribeStream',
    'dynamodb:GetRecords',
    'dynamodb:GetShardIterator',
    'dynamodb:ListStreams',
  ];
  const tableStatements = (fn: ServiceFunction) =>
    statementsOf(template, fn).filter((s) =>
      (Array.isArray(s.Action) ? s.Action : [s.Action]).some(
        (a) => a.startsWith('dynamodb:') && !STREAM_ACTIONS.includes(a),
      ),
    );

  it.each(fns.map((fn) => [fn.entryPath, fn] as const))(
    '%s is granted exactly the table actions its code sends',
    async (_path, fn) => {
      const sent = await actionsSentBy(fn.entryPath);
      const statements = tableStatements(fn);
      const onTable = statements.filter((s) => !JSON.stringify(s.Resource).includes('/index/'));
      const onIndex = statements.filter((s) => JSON.stringify(s.Resource).includes('/index/'));
      const granted = [...new Set(onTable.flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action])))].sort();
      expect(granted).toEqual(sent.actions);
      expect(granted).not.toContain('dynamodb:Scan');
      expect(onIndex.length > 0).toBe(sent.usesIndex);
      for (const s of onIndex) {
        expect(s.Action).toBe('dynamodb:Query');
        expect(JSON.stringify(s.Resource)).toContain(`/index/${TABLE.gsi1.indexName}"`);
        expect(JSON.stringify(s.Resource)).not.toContain('/index/*');
      }
    },
    60_000,
  );

  it('limits the authorizer to token items with a LeadingKeys condition', () => {
    const [statement, ...rest] = tableStatements(api.authorizerFunction);
    expect(rest).toHaveLength(0);
    expect(statement!.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['TOKEN#*'] } });
    // The pattern matches the partition key of every token item and of nothing else the table holds.
    expect(keys.token('ab12').pk).toMatch(/^TOKEN#/);
    expect(keys.key(1).pk).not.toMatch(/^TOKEN#/);
    expect(TABLE_ACCESS.authorizer.leadingKeys).toEqual(['TOKEN#*']);
  });

  it('grants no function a wildcard DynamoDB action or all indexes', () => {
    const all = JSON.stringify(template.findResources('AWS::IAM::Policy'));
    expect(all).not.toMatch(/"dynamodb:\*"|dynamodb:Scan|\/index\/\*/);
  });
});
