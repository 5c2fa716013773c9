/**
 * `npm run rehearse`: synthesizes the CDK app (bin/app.ts) into cdk.out, then runs what it would
 * deploy on this machine (emulation/rehearsal/stack.ts): the API on http://127.0.0.1:$PORT, every
 * function from its bundle with its role's permissions enforced. `--no-synth` reuses cdk.out.
 * Data lives in memory; each start is a fresh deploy.
 */
import path from 'node:path';
import { checkJava } from '#emulation/local/dynamodb-local.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const port = Number(process.env.PORT || 3000);
const dynamodbPort = Number(process.env.DYNAMODB_PORT || 8000);
const assemblyDir = path.resolve(process.env.CDK_OUT || 'cdk.out');
const out = (line: string) => process.stdout.write(line + '\n');

const java = checkJava();
if (!java.ok) {
  process.stderr.write(java.message + '\n');
  process.exit(1);
}
const { synthesize } = await import('#emulation/rehearsal/synth.ts');
const { startRehearsal } = await import('#emulation/rehearsal/stack.ts');

if (!process.argv.includes('--no-synth')) {
  out(`synthesizing the CDK app into ${path.relative(process.cwd(), assemblyDir) || assemblyDir} ...`);
  const started = Date.now();
  try {
    await synthesize({ outDir: assemblyDir });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  }
  out(`synthesized in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

let stack;
try {
  stack = await startRehearsal({ assemblyDir, port, dynamodbPort, dataDir: null, log: out });
} catch (err) {
  process.stderr.write(`could not start the rehearsal: ${(err as Error).message}\n`);
  process.exit(1);
}
const admin = stack.functions.find((f) => /admin/i.test(f.logicalId));
out(
  [
    '',
    `Rehearsal of the CDK app listening on ${stack.url}/api/v1/integrations (from the bundles in cdk.out)`,
    `  tables:  ${stack.tables.map((t) => t.name).join(', ')} (DynamoDB Local on port ${dynamodbPort}, in memory)`,
    admin
      ? `  admin:   AWS_ENDPOINT_URL_LAMBDA=${stack.url} AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=x npm run admin -- stores create --id demo --name Demo --currency EUR --function ${admin.name}`
      : '',
    '  IAM:     every AWS call is checked against the calling function\'s role; refusals print "IAM DENIED"',
    '',
  ].join('\n'),
);

let stopping = false;
const stop = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  out(`\n${signal}: stopping...`);
  await stack.stop();
  process.exit(0);
};
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
