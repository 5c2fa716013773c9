/**
 * The rehearsal stack: what `cdk deploy` would create, run on this machine from the cloud
 * assembly alone. Tables and queues from the templates, each function from its bundle in its own
 * execution environments with the template's environment, timeout and memory, every AWS call it
 * makes checked against its role, the REST API from the API Gateway resources, the event-source
 * mappings, and the Lambda Invoke API for the admin CLI's `--function` mode.
 */
import type { ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { startFauxqs } from 'fauxqs';
import { resetConfig } from '#shared/config.ts';
import { resetDbClients } from '#db/core/client.ts';
import { waitForStore } from '#emulation/local/bootstrap.ts';
import { installLocalCommitBarrier } from '#emulation/local/commit-barrier.ts';
import { startDynamoDbLocal, type DynamoDbLocal } from '#emulation/local/dynamodb-local.ts';
import { readApi } from './api-model.ts';
import { readFunctions, type FunctionSpec } from './functions.ts';
import { createTemplateGateway } from './gateway.ts';
import { IamEvaluator, type Denial } from './iam.ts';
import { createInvokeApi, INVOKE_PATH } from './lambda-api.ts';
import { startMappings } from './mappings.ts';
import { logGroupName, RehearsalLogs } from './logs.ts';
import { startFunctionProxy } from './proxy.ts';
import type { RequestTarget } from './aws-requests.ts';
import { Resolver } from './resolve.ts';
import { createQueues, createTables, nameTheRest, QUEUE_PROXY_HOST, type RehearsalTable } from './resources.ts';
import { FunctionSandbox } from './sandbox.ts';
import { readAssembly, resourcesOfType, type Json } from './template.ts';
import { startIntegratorAws, type IntegratorAws } from '#emulation/local/integrator-aws.ts';

export interface RehearsalOptions {
  /** The cloud assembly (`cdk.out`). */
  assemblyDir: string;
  port: number;
  host?: string;
  dynamodbPort: number;
  /** DynamoDB Local data directory; null keeps it in memory. */
  dataDir: string | null;
  /** Physical name of a table the template leaves unnamed (default `Stack-LogicalId`). */
  tableName?: (logicalId: string) => string;
  /** Added to every function's environment (default: loopback webhook receivers allowed). */
  envOverrides?: Record<string, string>;
  log?: (line: string) => void;
}

export interface RehearsalStack {
  /** The API's base (no stage prefix), also the Lambda endpoint for AWS_ENDPOINT_URL_LAMBDA. */
  url: string;
  port: number;
  dynamodbEndpoint: string;
  /** The DynamoDB Local behind it, for a test that stops the store (SIGSTOP) as an outage would. */
  dynamodbProcess: ChildProcess;
  tables: RehearsalTable[];
  functions: FunctionSpec[];
  /** Every AWS call a function was refused, in order. */
  denials: Denial[];
  /** Invocations so far by function logical id (API Gateway, event-source mappings, Invoke API). */
  invocations: Map<string, number>;
  /** Where its queues live (an SQS destination's queue too). */
  fauxqsEndpoint: string;
  /** The integrator's account for SQS and EventBridge destinations: STS, EventBridge, roles (emulation/local/integrator-aws.ts). */
  integrator: IntegratorAws;
  stop(): Promise<void>;
}

const ACCOUNT = '000000000000';

export async function startRehearsal(options: RehearsalOptions): Promise<RehearsalStack> {
  const log = options.log ?? (() => undefined);
  const assembly = readAssembly(options.assemblyDir, {
    region: process.env.AWS_REGION || 'us-east-1',
    account: ACCOUNT,
  });
  const cleanups: (() => unknown)[] = [];
  const stop = async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  };
  try {
    const store: DynamoDbLocal = startDynamoDbLocal({ port: options.dynamodbPort, dataDir: options.dataDir });
    cleanups.push(() => store.stop());
    Object.assign(process.env, { DYNAMODB_ENDPOINT: store.endpoint, AWS_REGION: assembly.region });
    resetConfig();
    resetDbClients();
    installLocalCommitBarrier();
    await waitForStore();
    const fauxqs = await startFauxqs({ port: 0, host: '127.0.0.1', logger: false });
    cleanups.push(() => fauxqs.stop());
    const fauxqsEndpoint = `http://127.0.0.1:${fauxqs.port}`;

    const resolver = new Resolver(assembly);
    const ddb = new DynamoDBClient({
      endpoint: store.endpoint,
      region: assembly.region,
      credentials: { accessKeyId: 'cloudformation', secretAccessKey: 'local' },
    });
    const tables = await createTables(assembly, resolver, ddb, options.tableName);
    ddb.destroy();
    const queues = createQueues(assembly, resolver, fauxqs);
    nameTheRest(assembly, resolver);
    resolver.collectExports();
    const functions = readFunctions(assembly, resolver);
    for (const fn of functions) {
      // CloudFormation would refuse these; here they would only show up as odd denials.
      const dangling = JSON.stringify([fn.environment, fn.policies]).match(/<unresolved:[^>]*>/g);
      if (dangling)
        log(`WARNING ${fn.logicalId}: references the templates cannot resolve: ${[...new Set(dangling)].join(', ')}`);
    }

    const iam = new IamEvaluator(ACCOUNT, assembly.region);
    const denials: Denial[] = [];
    const kmsKeys = resourcesOfType(assembly, 'AWS::KMS::Key').map(({ stack, id, resource }) => ({
      arn: resolver.lookup(stack, id)?.attributes.Arn ?? '',
      policy: resolver.resolve(stack, (resource.Properties?.KeyPolicy ?? {}) as Json) as Record<string, unknown>,
    }));
    // SQS and EventBridge destinations: the signer's AssumeRole is checked against its own policy
    // here, then against the role's trust there; the role's session's sends against the role's policies.
    const integrator = await startIntegratorAws(assembly.region);
    cleanups.push(() => integrator.stop());
    const target: RequestTarget = {
      tables,
      queues,
      kmsKeys,
      region: assembly.region,
      account: ACCOUNT,
      integrator,
      functionArns: new Map(functions.map((f) => [f.name, f.arn])),
    };
    const logs = new RehearsalLogs();
    for (const { stack, id } of resourcesOfType(assembly, 'AWS::Logs::LogGroup'))
      logs.known.add(logGroupName(resolver.lookup(stack, id)?.ref ?? id));
    const sandboxes = new Map<string, FunctionSandbox>();
    for (const fn of functions) {
      const proxy = await startFunctionProxy({
        fn,
        target,
        iam,
        dynamodbEndpoint: store.endpoint,
        logs,
        onDenied: (d) => {
          denials.push(d);
          log(
            `IAM DENIED ${d.function}: ${d.action} on ${d.resource} (${d.result}${Object.keys(d.context).length ? `; ${JSON.stringify(d.context)}` : ''})`,
          );
        },
        onIntegratorDenied: (d) =>
          log(`IAM DENIED by the integrator's role policy, ${d.function}: ${d.action} on ${d.resource} (${d.result})`),
      });
      cleanups.push(() => new Promise((resolve) => proxy.server.close(resolve)));
      const host = new URL(proxy.endpoint).host;
      const environment = Object.fromEntries(
        Object.entries(fn.environment).map(([k, v]) => [k, v.replaceAll(QUEUE_PROXY_HOST, host)]),
      );
      const env = {
        ...environment,
        AWS_REGION: assembly.region,
        AWS_DEFAULT_REGION: assembly.region,
        AWS_ACCESS_KEY_ID: fn.logicalId,
        AWS_SECRET_ACCESS_KEY: 'rehearsal',
        AWS_ENDPOINT_URL_DYNAMODB: proxy.endpoint,
        AWS_ENDPOINT_URL_SQS: proxy.endpoint,
        AWS_ENDPOINT_URL_KMS: proxy.endpoint,
        AWS_ENDPOINT_URL_CLOUDWATCH_LOGS: proxy.endpoint,
        AWS_ENDPOINT_URL_STS: proxy.endpoint,
        AWS_ENDPOINT_URL_EVENTBRIDGE: proxy.endpoint,
        AWS_ENDPOINT_URL_LAMBDA: proxy.endpoint,
        AWS_LAMBDA_FUNCTION_NAME: fn.name,
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memoryMb),
        AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
        AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
        LAMBDA_TASK_ROOT: fn.codeDir,
        TZ: 'UTC',
        PATH: process.env.PATH ?? '',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        ...(options.envOverrides ?? { ALLOW_PRIVATE_WEBHOOKS: '1' }),
      };
      const sandbox = new FunctionSandbox(fn, env);
      sandboxes.set(fn.arn, sandbox);
      cleanups.push(() => sandbox.stop());
    }
    const invocations = new Map<string, number>();
    const invoke = (arn: string, event: unknown) => {
      const sandbox = sandboxes.get(arn);
      if (!sandbox) throw new Error(`no function ${arn} in the templates`);
      const id = functions.find((f) => f.arn === arn)?.logicalId ?? arn;
      invocations.set(id, (invocations.get(id) ?? 0) + 1);
      return sandbox.invoke(event);
    };

    const model = readApi(assembly, resolver);
    const gateway = model
      ? createTemplateGateway(model, invoke, log, (group, line) => logs.append(group, line))
      : undefined;
    const invokeApi = createInvokeApi(functions, invoke);
    const server: Server = createServer((req, res) => {
      if (INVOKE_PATH.test(new URL(req.url ?? '/', 'http://local').pathname)) void invokeApi(req, res);
      else if (gateway) gateway(req, res);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host ?? '127.0.0.1', () => resolve());
    });
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    );
    const port = (server.address() as AddressInfo).port;
    target.lambdaEndpoint = `http://127.0.0.1:${port}`;

    // The pollers keep their stream positions in the (first streamed) table, as the local stack does.
    const streamed = tables.find((t) => t.streamArn);
    if (streamed) process.env.TABLE_NAME = streamed.name;
    resetConfig();
    resetDbClients();
    const aborter = new AbortController();
    log('event-source mappings:');
    const loops = await startMappings({
      assembly,
      resolver,
      tables,
      queues,
      functions,
      iam,
      dynamodbEndpoint: store.endpoint,
      fauxqsEndpoint,
      invoke,
      signal: aborter.signal,
      log,
    });
    cleanups.push(async () => {
      aborter.abort();
      await Promise.all(loops.map((l) => l.catch(() => undefined)));
    });
    log(
      `functions: ${functions.map((f) => `${f.logicalId} (${f.memoryMb} MB, ${f.timeoutSeconds} s, ${f.policies.length} policies)`).join(', ')}`,
    );
    return {
      url: `http://127.0.0.1:${port}`,
      port,
      dynamodbEndpoint: store.endpoint,
      dynamodbProcess: store.process,
      tables,
      functions,
      denials,
      invocations,
      fauxqsEndpoint,
      integrator,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
