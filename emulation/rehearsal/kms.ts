/**
 * The rehearsal's stand-in for AWS KMS (symmetric Encrypt and Decrypt, AWS JSON 1.1, target
 * `TrentService.<Op>`), so a function that seals or opens webhook secrets runs as deployed: its
 * call is checked against its role like every other AWS call (action, key ARN, the encryption
 * context as `kms:EncryptionContext:<name>`), then answered with AES-256-GCM under a key that
 * lives only as long as the rehearsal. The ciphertext carries the key ARN and is bound to the
 * encryption context, as KMS's is.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { AuthorizationCheck } from './aws-requests.ts';

type Body = Record<string, unknown>;
const secret = randomBytes(32);

const contextOf = (body: Body) => (body.EncryptionContext ?? {}) as Record<string, string>;
const aad = (context: Record<string, string>) => Buffer.from(JSON.stringify(Object.entries(context).sort()));

function seal(keyArn: string, plaintext: Buffer, context: Record<string, string>): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', secret, iv).setAAD(aad(context));
  const sealed = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  const arn = Buffer.from(keyArn, 'utf8');
  return Buffer.concat([Buffer.from([arn.length >> 8, arn.length & 0xff]), arn, iv, cipher.getAuthTag(), sealed]);
}

function open(blob: Buffer, context: Record<string, string>): { keyArn: string; plaintext: Buffer } {
  const length = ((blob[0] ?? 0) << 8) | (blob[1] ?? 0);
  const keyArn = blob.subarray(2, 2 + length).toString('utf8');
  const rest = blob.subarray(2 + length);
  const decipher = createDecipheriv('aes-256-gcm', secret, rest.subarray(0, 12)).setAAD(aad(context));
  decipher.setAuthTag(rest.subarray(12, 28));
  return { keyArn, plaintext: Buffer.concat([decipher.update(rest.subarray(28)), decipher.final()]) };
}

/** The key a KMS request addresses: KeyId, or for Decrypt without one the key in the ciphertext. */
function keyOf(operation: string, body: Body): string {
  if (typeof body.KeyId === 'string') return body.KeyId;
  if (operation !== 'Decrypt' || typeof body.CiphertextBlob !== 'string') return '*';
  try {
    return open(Buffer.from(body.CiphertextBlob, 'base64'), contextOf(body)).keyArn;
  } catch {
    return '*';
  }
}

export function kmsChecks(operation: string, body: Body): AuthorizationCheck[] {
  const context = Object.fromEntries(
    Object.entries(contextOf(body)).map(([k, v]) => [`kms:EncryptionContext:${k}`, v]),
  );
  return [{ action: `kms:${operation}`, resource: keyOf(operation, body), context }];
}

/** The answer to an allowed KMS request: [status, JSON body]. */
export function answerKms(operation: string, body: Body): [number, Body] {
  try {
    if (operation === 'Encrypt') {
      const keyId = String(body.KeyId);
      const blob = seal(keyId, Buffer.from(String(body.Plaintext), 'base64'), contextOf(body));
      return [200, { CiphertextBlob: blob.toString('base64'), KeyId: keyId, EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' }];
    }
    if (operation === 'Decrypt') {
      const { keyArn, plaintext } = open(Buffer.from(String(body.CiphertextBlob), 'base64'), contextOf(body));
      if (typeof body.KeyId === 'string' && body.KeyId !== keyArn)
        return [
          400,
          {
            __type: 'IncorrectKeyException',
            message: 'The key ID in the request does not identify the key that encrypted the ciphertext.',
          },
        ];
      return [
        200,
        { Plaintext: plaintext.toString('base64'), KeyId: keyArn, EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' },
      ];
    }
    return [
      400,
      {
        __type: 'UnsupportedOperationException',
        message: `the rehearsal's KMS answers Encrypt and Decrypt, not ${operation}`,
      },
    ];
  } catch {
    return [
      400,
      { __type: 'InvalidCiphertextException', message: 'The ciphertext or its encryption context is not valid.' },
    ];
  }
}

type Statement = { Condition?: Record<string, Record<string, unknown>> } & Record<string, unknown>;

/**
 * The policy simulator cannot match KMS's templated condition keys (`kms:EncryptionContext:<k>`):
 * it answers NoMatch even with the key in the request's context. KMS itself compares them to the
 * request's encryption context, so the stand-in does that here before the simulator sees the key
 * policy: a statement whose StringEquals on the context matches keeps its other conditions for the
 * simulator; one that does not match cannot grant this request and is left out.
 */
export function withEncryptionContextDecided(
  policy: { Statement?: unknown },
  context: Record<string, unknown>,
): { Statement: Statement[] } & Record<string, unknown> {
  const statements = ([policy.Statement ?? []].flat() as Statement[]).flatMap((statement) => {
    const equals = statement.Condition?.StringEquals;
    const keys = Object.keys(equals ?? {}).filter((k) => k.startsWith('kms:EncryptionContext:'));
    if (!equals || keys.length === 0) return [statement];
    const wanted = (k: string) => [equals[k]].flat().map(String);
    if (!keys.every((k) => wanted(k).includes(String(context[k])))) return [];
    const rest = Object.fromEntries(Object.entries(equals).filter(([k]) => !keys.includes(k)));
    const { StringEquals: _decided, ...others } = statement.Condition!;
    const condition = Object.keys(rest).length ? { ...others, StringEquals: rest } : others;
    return [{ ...statement, ...(Object.keys(condition).length ? { Condition: condition } : { Condition: undefined }) }];
  });
  return { ...policy, Statement: statements.map((s) => JSON.parse(JSON.stringify(s)) as Statement) };
}
