import { config } from '#shared/config.ts';
import { kmsCipher } from './kms-cipher.ts';
import { localCipher } from './local-cipher.ts';

/**
 * Webhook secrets at rest (docs/contract.md#webhooks): the admin path encrypts a new secret before it is
 * written, only the signer decrypts. Stored values say how they were sealed:
 *
 *   kms:<base64 KMS ciphertext>      WEBHOOK_SECRET_KMS_KEY_ID set (AWS)
 *   aesgcm:<base64 iv|tag|ct>        WEBHOOK_SECRET_KEY_FILE set (the local stack's stand-in)
 *   whsec_…                          plaintext: written before encryption was on, still read
 *
 * Both ciphers bind the ciphertext to its purpose (KMS encryption context, GCM associated data).
 */
export interface SecretCipher {
  readonly prefix: string;
  encrypt(plaintext: string): Promise<string>;
  /** `sealed` without the prefix. */
  decrypt(sealed: string): Promise<string>;
}

/** The cipher new secrets are sealed with, or none (plaintext) when neither is configured. */
function sealingCipher(): SecretCipher | null {
  const cfg = config();
  if (cfg.webhookSecretKmsKeyId) return kmsCipher(cfg.webhookSecretKmsKeyId);
  if (cfg.webhookSecretKeyFile) return localCipher(cfg.webhookSecretKeyFile);
  return null;
}

export async function encryptWebhookSecret(plaintext: string): Promise<string> {
  const cipher = sealingCipher();
  return cipher ? `${cipher.prefix}${await cipher.encrypt(plaintext)}` : plaintext;
}

/** Decrypted secrets by stored value: one KMS call per secret and container, not per attempt. */
const opened = new Map<string, string>();
const OPENED_MAX = 1000;

export async function decryptWebhookSecret(stored: string): Promise<string> {
  const hit = opened.get(stored);
  if (hit !== undefined) return hit;
  const cfg = config();
  let plaintext: string;
  if (stored.startsWith('kms:')) plaintext = await kmsCipher(cfg.webhookSecretKmsKeyId).decrypt(stored.slice(4));
  else if (stored.startsWith('aesgcm:')) {
    if (!cfg.webhookSecretKeyFile)
      throw new Error('a webhook secret is sealed with the local key, but WEBHOOK_SECRET_KEY_FILE is not set');
    plaintext = await localCipher(cfg.webhookSecretKeyFile).decrypt(stored.slice(7));
  } else plaintext = stored;
  if (opened.size >= OPENED_MAX) opened.delete(opened.keys().next().value as string);
  opened.set(stored, plaintext);
  return plaintext;
}
