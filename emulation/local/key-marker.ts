import { newContext } from '#shared/context.ts';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '#db/core/client.ts';
import { loadKey } from '#secrets/local-cipher.ts';

/**
 * Which key file the running local stack seals webhook secrets with, written into its table at
 * start, so that `npm run admin` run from another DATA_DIR (which would make a key of its own,
 * one the stack's signer cannot open) refuses instead. Local stack only: in AWS, KMS holds the key.
 */
const MARKER = { pk: 'LOCAL#SECRETKEY', sk: 'FILE' };

const fingerprint = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 16);

/** The stack's side: makes the key if it is missing and records its file and fingerprint. */
export async function recordKeyFile(file: string): Promise<void> {
  const absolute = path.resolve(file);
  await send(
    newContext(),
    new PutCommand({
      TableName: tableName(),
      Item: { ...MARKER, file: absolute, fingerprint: fingerprint(loadKey(absolute)) },
    }),
  );
}

/** A refusal the CLI prints as it is: one line, with what to do. */
export class LocalStackMismatch extends Error {}

/**
 * The CLI's side, before anything is sealed: passes when no stack recorded a key (an older
 * stack, another store) or when `file` is the stack's key or a copy of it.
 */
export async function checkKeyFile(file: string): Promise<void> {
  const marker = (await send(newContext(), new GetCommand({ TableName: tableName(), Key: MARKER }))).Item as
    | { file: string; fingerprint: string }
    | undefined;
  if (!marker) return;
  const mine = path.resolve(file);
  if (mine === marker.file) return;
  if (existsSync(mine) && fingerprint(loadKey(mine)) === marker.fingerprint) return;
  const why = existsSync(mine)
    ? 'a different key'
    : 'which does not exist: it would make a new key the stack cannot open';
  throw new LocalStackMismatch(
    `the running stack seals webhook secrets with ${marker.file}, but this command would use ${mine} (${why}); run it with the stack's DATA_DIR, or set WEBHOOK_SECRET_KEY_FILE=${marker.file}`,
  );
}
