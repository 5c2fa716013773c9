import type { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { WEBHOOK_SECRET_ENCRYPTION_CONTEXT } from '#domain/webhook/signature.ts';

/**
 * KMS's key administration actions, without any that encrypts, decrypts or makes data keys: the
 * account (its administrators, through IAM) can manage, rotate, re-permission and schedule the
 * key for deletion, never use it. Keeping them is what lets CloudFormation update the policy later.
 */
export const KEY_ADMIN_ACTIONS = [
  'kms:Create*',
  'kms:Describe*',
  'kms:Enable*',
  'kms:List*',
  'kms:Put*',
  'kms:Update*',
  'kms:Revoke*',
  'kms:Disable*',
  'kms:Get*',
  'kms:Delete*',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:ScheduleKeyDeletion',
  'kms:CancelKeyDeletion',
  'kms:RotateKeyOnDemand',
];

/**
 * The webhook secrets key's policy, in place of the default (account root `kms:*`): administration
 * for the account, and Encrypt/Decrypt only for roles of the API stack, only with the encryption
 * context shared/secrets/kms-cipher.ts sends. Which of those roles may do what (the admin function
 * encrypts and decrypts, the signer decrypts) is its IAM policy; the roles live in the other stack,
 * which deploys after this one, so the key policy names them by the stack's prefix.
 */
export function webhookSecretsKeyPolicy(scope: Stack, apiStackName: string): iam.PolicyDocument {
  const account = new iam.AccountRootPrincipal();
  return new iam.PolicyDocument({
    statements: [
      new iam.PolicyStatement({
        sid: 'KeyAdministration',
        principals: [account],
        actions: KEY_ADMIN_ACTIONS,
        resources: ['*'],
      }),
      new iam.PolicyStatement({
        sid: 'WebhookSecretsOfTheApiStack',
        principals: [account],
        actions: ['kms:Encrypt', 'kms:Decrypt'],
        resources: ['*'],
        conditions: {
          ArnLike: { 'aws:PrincipalArn': `arn:${scope.partition}:iam::${scope.account}:role/${apiStackName}-*` },
          StringEquals: Object.fromEntries(
            Object.entries(WEBHOOK_SECRET_ENCRYPTION_CONTEXT).map(([k, v]) => [`kms:EncryptionContext:${k}`, v]),
          ),
        },
      }),
    ],
  });
}
