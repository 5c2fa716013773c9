import { describe, expect, it } from 'vitest';
import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { acknowledgeDestinationRoles, addNagChecks } from '#infra/nag-acknowledgements.ts';
import { destinationRoleStatement } from '#infra/constructs/webhook-pipeline.ts';
import { EXTERNAL_ID_PREFIX, generateExternalId } from '#domain/key/destination.ts';
import { IamEvaluator } from '#emulation/rehearsal/iam.ts';
import { logicalId, statementsOf, synthStacks, templateApp } from './synth.ts';

/** IAM's StringLike: `*` any run of characters, `?` one. */
const stringLike = (pattern: string, value: string) =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  ).test(value);

/**
 * SQS and EventBridge destinations (docs/destinations.md): the signer's own policy lets it assume
 * only integrators' roles named store-events-*, with an external id of ours, never in this account;
 * no other function may assume any role; the admin may invoke the signer (for `webhooks ping`) and
 * nothing else; the role integrators trust is a stack output.
 */
describe('Destination roles', () => {
  const { api, template } = synthStacks();
  const signer = api.webhooks.webhooksFunction;
  const assumes = (fn: Parameters<typeof statementsOf>[1]) =>
    statementsOf(template, fn).filter((s) => [s.Action].flat().some((a) => a.startsWith('sts:')));

  it('lets the signer assume roles named store-events-* in other accounts, with an external id of ours, and nothing more', () => {
    expect(assumes(signer)).toEqual([
      {
        Sid: 'AssumeIntegratorDestinationRoles',
        Effect: 'Allow',
        Action: 'sts:AssumeRole',
        Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::*:role/store-events-*']] },
        Condition: {
          StringLike: { 'sts:ExternalId': `${EXTERNAL_ID_PREFIX}*` },
          StringNotEquals: { 'aws:ResourceAccount': { Ref: 'AWS::AccountId' } },
        },
      },
    ]);
  });

  it('asks of every external id a key is given what the signer’s condition asks, and of nothing else', () => {
    const condition = assumes(signer)[0]!.Condition!.StringLike as Record<string, string>;
    const pattern = condition['sts:ExternalId']!;
    for (let i = 0; i < 50; i++) expect(stringLike(pattern, generateExternalId())).toBe(true);
    // A value the integrator might pick (or one of another service) does not pass.
    for (const other of ['crm-external-id', 'whsec_abc', 'SIE_0123', ''])
      expect(stringLike(pattern, other)).toBe(false);
  });

  it('lets IAM admit exactly the documented roles: another account, store-events-*, an external id of ours', async () => {
    // The policy as deployed into account 000000000000, evaluated as the rehearsal evaluates every call.
    const deployed = JSON.parse(
      JSON.stringify(assumes(signer))
        .replaceAll('{"Ref":"AWS::Partition"}', '"aws"')
        .replaceAll('{"Ref":"AWS::AccountId"}', '"000000000000"'),
      (_, v) => (v && typeof v === 'object' && 'Fn::Join' in v ? v['Fn::Join'][1].join(v['Fn::Join'][0]) : v),
    );
    const iam = new IamEvaluator('000000000000', 'us-east-1');
    const caller = {
      key: 'signer',
      name: 'WebhooksFunction',
      roleArn: 'arn:aws:iam::000000000000:role/signer',
      policies: [{ name: 'signer', document: { Version: '2012-10-17', Statement: deployed } }],
    };
    // The role's trust policy is the resource policy of AssumeRole: across accounts both must allow.
    const trust = (principal: string, externalId: string | undefined) => ({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Principal: { AWS: principal },
          Action: 'sts:AssumeRole',
          ...(externalId === undefined ? {} : { Condition: { StringEquals: { 'sts:ExternalId': externalId } } }),
        },
      ],
    });
    const assume = async (roleArn: string, externalId: string | undefined, trustedPrincipal = caller.roleArn) =>
      (
        await iam.decide(
          caller,
          {
            action: 'sts:AssumeRole',
            resource: roleArn,
            context: externalId === undefined ? {} : { 'sts:ExternalId': externalId },
          },
          trust(trustedPrincipal, externalId),
        )
      ).allowed;
    const id = generateExternalId();
    expect(await assume('arn:aws:iam::111122223333:role/store-events-crm', id)).toBe(true);
    expect(await assume('arn:aws:iam::111122223333:role/crm-events', id)).toBe(false);
    expect(await assume('arn:aws:iam::111122223333:role/admin/store-events-crm', id)).toBe(false);
    expect(await assume('arn:aws:iam::111122223333:role/store-events-crm', 'chosen-by-them')).toBe(false);
    expect(await assume('arn:aws:iam::111122223333:role/store-events-crm', undefined)).toBe(false);
    // A role of this account that trusts the account (as many do) is left to the caller's own policy: refused.
    expect(await assume('arn:aws:iam::000000000000:role/store-events-crm', id, 'arn:aws:iam::000000000000:root')).toBe(
      false,
    );
  });

  it('gives no other function any sts action', () => {
    const roles = Object.values(template.findResources('AWS::IAM::Policy')).filter((p) =>
      JSON.stringify(p.Properties.PolicyDocument).includes('"sts:'),
    );
    expect(roles.map((p) => p.Properties.Roles)).toEqual([[{ Ref: logicalId(signer.role!) }]]);
  });

  it('lets the admin invoke the signer, itself only, and names it in SIGNER_FUNCTION_NAME', () => {
    const invokes = statementsOf(template, api.adminFunction).filter((s) =>
      [s.Action].flat().includes('lambda:InvokeFunction'),
    );
    expect(invokes.map((s) => s.Resource)).toEqual([{ 'Fn::GetAtt': [logicalId(signer), 'Arn'] }]);
    const admin = template.findResources('AWS::Lambda::Function')[logicalId(api.adminFunction)]!;
    expect(admin.Properties.Environment.Variables.SIGNER_FUNCTION_NAME).toEqual({ Ref: logicalId(signer) });
  });

  it('outputs the role integrators trust: the signer’s', () => {
    template.hasOutput('EventDeliveryRoleArn', { Value: { 'Fn::GetAtt': [logicalId(signer.role!), 'Arn'] } });
  });

  it('passes cdk-nag with one acknowledgement for the role pattern, and fails without it', () => {
    // The statement on a role of its own, once acknowledged as the signer is and once not.
    const report = (acknowledged: boolean) => {
      const app = templateApp();
      addNagChecks(app);
      const stack = new Stack(app, 'Roles');
      const role = new iam.Role(stack, 'Signer', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
      role.addToPolicy(destinationRoleStatement());
      if (acknowledged) acknowledgeDestinationRoles(role);
      try {
        app.synth();
        return '';
      } catch (err) {
        return (err as Error).message;
      }
    };
    expect(report(false)).toContain('AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:iam::*:role/store-events-*]');
    expect(report(true)).toBe('');
  }, 120_000);
});
