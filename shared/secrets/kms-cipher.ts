import type { KMSClient } from '@aws-sdk/client-kms';
import { config } from '#shared/config.ts';
import { awsClientBuilt } from '#shared/aws-clients.ts';
import type { SecretCipher } from './webhook-secret-cipher.ts';
import { WEBHOOK_SECRET_ENCRYPTION_CONTEXT } from '#domain/webhook/signature.ts';

// Loaded on first use: the local stack and the admin CLI (key file, no KMS) never load the client.
const sdk = () => import('@aws-sdk/client-kms');
let client: KMSClient | undefined;
const kms = async () =>
  (client ??= awsClientBuilt(new (await sdk()).KMSClient({ region: config().region, maxAttempts: 4 })));

/**
 * AWS KMS (symmetric key). The encryption context names the purpose, so a ciphertext made for
 * something else under the same key does not decrypt here (and CloudTrail shows what it was for).
 * Decrypt needs no key id (the ciphertext carries it); when one is configured it is passed, so a
 * ciphertext of another key is refused. The key policy requires this context (infra/key-policy.ts).
 */
export function kmsCipher(keyId: string | undefined): SecretCipher {
  const context = { ...WEBHOOK_SECRET_ENCRYPTION_CONTEXT };
  return {
    prefix: 'kms:',
    async encrypt(plaintext) {
      const { EncryptCommand } = await sdk();
      const out = await (await kms()).send(
        new EncryptCommand({ KeyId: keyId, Plaintext: Buffer.from(plaintext, 'utf8'), EncryptionContext: context }),
      );
      if (!out.CiphertextBlob) throw new Error('KMS returned no ciphertext');
      return Buffer.from(out.CiphertextBlob).toString('base64');
    },
    async decrypt(sealed) {
      const { DecryptCommand } = await sdk();
      const out = await (await kms()).send(
        new DecryptCommand({
          CiphertextBlob: Buffer.from(sealed, 'base64'),
          EncryptionContext: context,
          ...(keyId ? { KeyId: keyId } : {}),
        }),
      );
      if (!out.Plaintext) throw new Error('KMS returned no plaintext');
      return Buffer.from(out.Plaintext).toString('utf8');
    },
  };
}
