// One Lambda execution environment: loads the bundled handler the way the Node.js runtime does
// (`file.export` from the code directory) and runs one invocation at a time for the pool in
// sandbox.ts. Plain JavaScript: it runs in a worker thread without the TypeScript loader.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';

const { codeDir, handler, functionName, functionArn, memoryMb } = workerData;
const dot = handler.lastIndexOf('.');
const base = path.join(codeDir, handler.slice(0, dot));
const exportName = handler.slice(dot + 1);
const file = ['.mjs', '.js', '.cjs'].map((ext) => base + ext).find((f) => existsSync(f));

function errorOf(err) {
  const e = err instanceof Error ? err : new Error(String(err));
  return { errorType: e.name || 'Error', errorMessage: e.message, stack: String(e.stack ?? '').split('\n') };
}

let fn;
try {
  if (!file)
    throw Object.assign(new Error(`Cannot find module '${handler.slice(0, dot)}' in ${codeDir}`), {
      name: 'Runtime.ImportModuleError',
    });
  const mod = await import(pathToFileURL(file).href);
  fn = mod[exportName];
  if (typeof fn !== 'function')
    throw Object.assign(new Error(`${handler} is undefined or not exported`), { name: 'Runtime.HandlerNotFound' });
  parentPort.postMessage({ ready: true });
} catch (err) {
  parentPort.postMessage({ initError: errorOf(err) });
}

parentPort.on('message', async ({ requestId, event, deadline }) => {
  const context = {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: functionArn,
    memoryLimitInMB: String(memoryMb),
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'rehearsal',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
  // As the Node.js runtime does for a function with active tracing (every function here): the
  // invocation's trace header in the environment, where the X-Ray SDK finds it. Not sampled: the
  // rehearsal runs no X-Ray daemon, so spans are built as in AWS and none is sent.
  process.env._X_AMZN_TRACE_ID = `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString('hex')};Parent=${randomBytes(8).toString('hex')};Sampled=0`;
  try {
    const result = await fn(JSON.parse(event), context);
    parentPort.postMessage({ requestId, ok: true, result: result === undefined ? 'null' : JSON.stringify(result) });
  } catch (err) {
    parentPort.postMessage({ requestId, ok: false, error: errorOf(err) });
  }
});
