import { describe, expect, it } from 'vitest';
import { withEncryptionContextDecided } from '#emulation/rehearsal/kms.ts';

/** The rehearsal decides a key policy's encryption-context conditions as KMS does (the simulator cannot). */
describe('rehearsal KMS: encryption-context conditions', () => {
  const policy = {
    Version: '2012-10-17',
    Statement: [
      { Sid: 'Admin', Effect: 'Allow', Action: 'kms:Describe*', Resource: '*' },
      {
        Sid: 'Use',
        Effect: 'Allow',
        Action: ['kms:Encrypt'],
        Resource: '*',
        Condition: {
          ArnLike: { 'aws:PrincipalArn': 'arn:aws:iam::1:role/Api-*' },
          StringEquals: { 'kms:EncryptionContext:purpose': 'webhook-secret' },
        },
      },
    ],
  };

  it('keeps a statement whose context matches, leaving its other conditions to the simulator', () => {
    const decided = withEncryptionContextDecided(policy, { 'kms:EncryptionContext:purpose': 'webhook-secret' });
    expect(decided.Statement.map((s) => s.Sid)).toEqual(['Admin', 'Use']);
    expect(decided.Statement[1]!.Condition).toEqual({ ArnLike: { 'aws:PrincipalArn': 'arn:aws:iam::1:role/Api-*' } });
  });

  it('leaves out a statement whose context differs or is missing: it cannot grant the request', () => {
    expect(
      withEncryptionContextDecided(policy, { 'kms:EncryptionContext:purpose': 'other' }).Statement.map((s) => s.Sid),
    ).toEqual(['Admin']);
    expect(withEncryptionContextDecided(policy, {}).Statement.map((s) => s.Sid)).toEqual(['Admin']);
  });
});
