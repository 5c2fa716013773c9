import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, resetConfig } from '#shared/config.ts';
import { decryptWebhookSecret, encryptWebhookSecret } from '#secrets/webhook-secret-cipher.ts';

const dir = mkdtempSync(join(tmpdir(), 'secret-cipher-'));
const useKeyFile = (name: string | undefined) => {
  if (name === undefined) delete process.env.WEBHOOK_SECRET_KEY_FILE;
  else process.env.WEBHOOK_SECRET_KEY_FILE = join(dir, name);
  delete process.env.WEBHOOK_SECRET_KMS_KEY_ID;
  resetConfig();
};
const secret = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=';

describe('webhook secret cipher (the local stand-in for KMS)', () => {
  afterEach(() => useKeyFile(undefined));

  it('seals with a fresh IV each time and opens what it sealed', async () => {
    useKeyFile('a.key');
    const one = await encryptWebhookSecret(secret);
    const two = await encryptWebhookSecret(secret);
    expect(one).toMatch(/^aesgcm:/);
    expect(one).not.toBe(two);
    expect(one).not.toContain('AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8');
    expect(await decryptWebhookSecret(one)).toBe(secret);
    expect(await decryptWebhookSecret(two)).toBe(secret);
  });

  it('refuses a tampered ciphertext and one sealed with another key', async () => {
    useKeyFile('b.key');
    const sealed = await encryptWebhookSecret(secret);
    const raw = Buffer.from(sealed.slice('aesgcm:'.length), 'base64');
    raw[raw.length - 1] = (raw[raw.length - 1] ?? 0) ^ 1;
    await expect(decryptWebhookSecret(`aesgcm:${raw.toString('base64')}`)).rejects.toThrow();
    useKeyFile('c.key');
    await expect(decryptWebhookSecret(sealed)).rejects.toThrow();
  });

  it('passes plaintext through: legacy secrets open as they are, and nothing is sealed without a key', async () => {
    useKeyFile('d.key');
    expect(await decryptWebhookSecret(secret)).toBe(secret);
    useKeyFile(undefined);
    expect(await encryptWebhookSecret(secret)).toBe(secret);
  });

  it('does not open a locally sealed secret without the key file', async () => {
    useKeyFile('e.key');
    const sealed = await encryptWebhookSecret(secret);
    useKeyFile(undefined);
    await expect(decryptWebhookSecret(sealed)).rejects.toThrow(/WEBHOOK_SECRET_KEY_FILE/);
  });

  it.each(['', '  ', 'undefined', 'null'])(
    'refuses the key-file path %j instead of writing a key where the process runs',
    (raw) => {
      expect(() => loadConfig({ WEBHOOK_SECRET_KEY_FILE: raw })).toThrow(
        /WEBHOOK_SECRET_KEY_FILE must be the path of the local AES key file/,
      );
      expect(loadConfig({}).webhookSecretKeyFile).toBeUndefined();
      expect(loadConfig({ WEBHOOK_SECRET_KEY_FILE: join(dir, 'f.key') }).webhookSecretKeyFile).toBe(join(dir, 'f.key'));
    },
  );
});

process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
