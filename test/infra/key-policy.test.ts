import { describe, expect, it } from 'vitest';
import { App } from 'aws-cdk-lib';
import { StatefulStack } from '#infra/stateful-stack.ts';
import { ApiStack } from '#infra/api-stack.ts';
import { KEY_ADMIN_ACTIONS } from '#infra/key-policy.ts';
import { WEBHOOK_SECRET_ENCRYPTION_CONTEXT } from '#domain/webhook/signature.ts';
import { synthStacks } from './synth.ts';

type Statement = {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Principal: unknown;
  Condition?: Record<string, Record<string, unknown>>;
};

/** The webhook secrets key: no account-wide kms:*, use only by the API stack's roles with the cipher's encryption context. */
describe('webhook secrets key policy', () => {
  const { data } = synthStacks();
  const key = Object.values(data.findResources('AWS::KMS::Key'))[0]!;
  const statements = key.Properties.KeyPolicy.Statement as Statement[];
  const actions = (s: Statement) => [s.Action].flat();

  it('replaces the default kms:* grant with administration that cannot encrypt or decrypt', () => {
    expect(statements.flatMap(actions)).not.toContain('kms:*');
    const admin = statements.find((s) => s.Sid === 'KeyAdministration')!;
    expect(actions(admin)).toEqual(KEY_ADMIN_ACTIONS);
    expect(actions(admin).filter((a) => /Encrypt|Decrypt|GenerateDataKey|ReEncrypt/.test(a))).toEqual([]);
    expect(statements.map((s) => s.Sid).sort()).toEqual(['KeyAdministration', 'WebhookSecretsOfTheApiStack']);
  });

  it("lets only the API stack's roles encrypt and decrypt, only with the encryption context the cipher sends", () => {
    const use = statements.find((s) => s.Sid === 'WebhookSecretsOfTheApiStack')!;
    expect(actions(use).sort()).toEqual(['kms:Decrypt', 'kms:Encrypt']);
    expect(use.Condition!.StringEquals).toEqual({
      'kms:EncryptionContext:purpose': WEBHOOK_SECRET_ENCRYPTION_CONTEXT.purpose,
    });
    expect(JSON.stringify(use.Condition!.ArnLike!['aws:PrincipalArn'])).toMatch(/:role\/Api-\*"/);
  });

  it('refuses an API stack whose roles the key policy does not admit', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const data = new StatefulStack(app, 'Data', { apiStackName: 'Other' });
    expect(() => new ApiStack(app, 'Api', { data })).toThrow(/admits roles of stack Other/);
  });
});
