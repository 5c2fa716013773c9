import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { SecretCipher } from './webhook-secret-cipher.ts';

const AAD = Buffer.from('webhook-secret');

/** The 256-bit key in `file` (base64), made on first use with mode 0600; every process of a stack shares it. */
export function loadKey(file: string): Buffer {
  mkdirSync(dirname(file), { recursive: true });
  try {
    writeFileSync(file, randomBytes(32).toString('base64') + '\n', { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a 256-bit key (base64)`);
  return key;
}

const keysByFile = new Map<string, Buffer>();

/**
 * The local stand-in for KMS (no network, no AWS account): AES-256-GCM with a key file, so the
 * local stack runs the same path as AWS (sealed on write, opened only in the signer). Not a key
 * management system: whoever reads the file can open every secret.
 */
export function localCipher(file: string): SecretCipher {
  const key = () => {
    let k = keysByFile.get(file);
    if (!k) keysByFile.set(file, (k = loadKey(file)));
    return k;
  };
  return {
    prefix: 'aesgcm:',
    async encrypt(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key(), iv).setAAD(AAD);
      const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64');
    },
    async decrypt(sealed) {
      const raw = Buffer.from(sealed, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key(), raw.subarray(0, 12)).setAAD(AAD);
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}
