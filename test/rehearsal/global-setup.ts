import path from 'node:path';
import { tmpdir } from 'node:os';
import type { TestProject } from 'vitest/node';
import { API_BASE_PATH } from '#http/api-routes.ts';
import { checkJava } from '#emulation/local/dynamodb-local.ts';
import { startRehearsal, type RehearsalStack } from '#emulation/rehearsal/stack.ts';
import { synthesize } from '#emulation/rehearsal/synth.ts';
import { freePort } from '#fixtures/free-port.ts';
import { QUICK_JVM } from '#fixtures/quick-jvm.ts';

/**
 * The rehearsal project's one stack: the CDK app synthesized into .rehearsal/app.out (or the
 * assembly in REHEARSAL_CDK_OUT, already synthesized) and run from its bundles with IAM enforced.
 * The end-to-end files then run against it unchanged; their set-up goes straight to the store.
 */
let stack: RehearsalStack | undefined;

export async function setup(project: TestProject) {
  const java = checkJava();
  if (!java.ok) {
    process.stderr.write(java.message + '\n');
    process.exit(1);
  }
  const assemblyDir = process.env.REHEARSAL_CDK_OUT
    ? path.resolve(process.env.REHEARSAL_CDK_OUT)
    : path.resolve('.rehearsal/app.out');
  if (!process.env.REHEARSAL_CDK_OUT) await synthesize({ outDir: assemblyDir, validation: false });
  // Its store is started from this process (test/fixtures/quick-jvm.ts says why the flags).
  process.env.JAVA_TOOL_OPTIONS = QUICK_JVM.JAVA_TOOL_OPTIONS;
  const tableName = `rehearsal-${Date.now()}`;
  // The files' set-up creates keys straight in the store, sealing their webhook secrets with this
  // local key; the functions get the file too, so the signer opens those as well as the secrets
  // the admin function seals with the (stand-in) KMS key of the template.
  const webhookSecretKeyFile = path.join(tmpdir(), `rehearsal-${tableName}-${process.pid}.key`);
  stack = await startRehearsal({
    assemblyDir,
    port: 0,
    dynamodbPort: await freePort(),
    dataDir: null,
    tableName: () => tableName,
    envOverrides: { ALLOW_PRIVATE_WEBHOOKS: '1', LOG_LEVEL: 'warn', WEBHOOK_SECRET_KEY_FILE: webhookSecretKeyFile },
    log: (line) => (line.startsWith('IAM DENIED') ? process.stderr.write(line + '\n') : undefined),
  });
  project.provide('baseUrl', `${stack.url}${API_BASE_PATH}`);
  // The app itself, for test/rehearsal/iam-denied.test.ts's copy of it without a grant.
  project.provide('assemblyDir', assemblyDir);
  project.provide('dynamodbEndpoint', stack.dynamodbEndpoint);
  project.provide('tableName', tableName);
  project.provide('webhookSecretKeyFile', webhookSecretKeyFile);
  // SQS and EventBridge destinations: the integrator's queue on the stack's fauxqs, its STS and EventBridge.
  project.provide('sqsEndpoint', stack.fauxqsEndpoint);
  project.provide('integratorEndpoint', stack.integrator.endpoint);
  // What an integrator's role trusts: the signer's role (the stack output EventDeliveryRoleArn).
  project.provide(
    'signerRoleArn',
    stack.functions.find((f) => f.logicalId.startsWith('WebhooksWebhooksFunction'))?.roleArn ?? '',
  );
  // The Lambda API in front of the functions (AWS_ENDPOINT_URL_LAMBDA), for the admin's --function path.
  project.provide('rehearsalUrl', stack.url);
  project.provide(
    'adminFunctionName',
    stack.functions.find((f) => f.logicalId.startsWith('AdminFunction'))?.name ?? '',
  );
}

declare module 'vitest' {
  export interface ProvidedContext {
    assemblyDir: string;
    rehearsalUrl: string;
    adminFunctionName: string;
    signerRoleArn: string;
  }
}

export async function teardown() {
  const denials = stack?.denials ?? [];
  await stack?.stop();
  // A refused AWS call fails the run even when no assertion noticed it (a swallowed error).
  if (denials.length)
    throw new Error(
      `IAM denied ${denials.length} call(s): ${denials.map((d) => `${d.function} ${d.action} on ${d.resource}`).join('; ')}`,
    );
}
