/**
 * The AWS endpoint each function talks to: one loopback port per function (its
 * AWS_ENDPOINT_URL_DYNAMODB, _KMS, _CLOUDWATCH_LOGS and the host of its queue URLs), so every request is known to
 * come from that function. Each DynamoDB, SQS, KMS or CloudWatch Logs request is turned into IAM checks (aws-requests.ts, kms.ts),
 * evaluated against the function's role (iam.ts); an allowed request goes on to DynamoDB Local or
 * fauxqs unchanged, a denied one is answered as AWS answers it (400 AccessDeniedException) and
 * reported with the function, action and resource.
 */
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  dynamoDbChecks,
  eventBridgeChecks,
  queueArnOfUrl,
  sqsChecks,
  stsChecks,
  type AuthorizationCheck,
  type RequestTarget,
} from './aws-requests.ts';
import { answerKms, kmsChecks, withEncryptionContextDecided } from './kms.ts';
import { logsChecks, type RehearsalLogs } from './logs.ts';
import type { FunctionSpec, PolicyDocument } from './functions.ts';
import { INVOKE_PATH } from './lambda-api.ts';
import type { Caller, Denial, IamEvaluator } from './iam.ts';

export interface ProxyOptions {
  fn: FunctionSpec;
  target: RequestTarget;
  iam: IamEvaluator;
  dynamodbEndpoint: string;
  /** CloudWatch Logs (the access log group and Logs Insights over it, logs.ts). */
  logs: RehearsalLogs;
  onDenied: (denial: Denial) => void;
  /** A call of an integrator's role session (an SQS or EventBridge destination) its own policies refused: theirs to fix, not the stack's. */
  onIntegratorDenied?: (denial: Denial) => void;
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function forward(req: IncomingMessage, res: ServerResponse, url: URL, body: Buffer): void {
  const headers = { ...req.headers, host: url.host, 'content-length': String(body.length) };
  const upstream = httpRequest(url, { method: req.method, headers }, (up) => {
    res.writeHead(up.statusCode ?? 502, up.headers);
    up.pipe(res);
  });
  upstream.on('error', (err) => {
    res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`rehearsal proxy: ${err.message}`);
  });
  upstream.end(body);
}

function deny(res: ServerResponse, caller: Caller, account: string, check: AuthorizationCheck, json: boolean): void {
  const role = caller.roleArn.split('/').pop();
  const message = `User: arn:aws:sts::${account}:assumed-role/${role}/${caller.name} is not authorized to perform: ${check.action} on resource: ${check.resource} because no identity-based policy allows the ${check.action} action`;
  if (json) {
    res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-query-error': 'AccessDenied;Sender' });
    res.end(JSON.stringify({ __type: 'com.amazon.coral.service#AccessDeniedException', message, Message: message }));
  } else {
    res.writeHead(403, { 'content-type': 'text/xml' });
    res.end(
      `<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>${message}</Message></Error></ErrorResponse>`,
    );
  }
}

export async function startFunctionProxy(options: ProxyOptions): Promise<{ endpoint: string; server: Server }> {
  const { fn, target, iam } = options;
  const server = createServer((req, res) => {
    void (async () => {
      let body = await readAll(req);
      const amzTarget = String(req.headers['x-amz-target'] ?? '');
      const [service, operation = ''] = amzTarget.split('.');
      let checks: AuthorizationCheck[];
      let resourcePolicies: PolicyDocument[] = [];
      let upstream: URL | undefined;
      const json = amzTarget !== '';
      // A call signed with a session of an integrator's role (the signer assumed it for an SQS or
      // EventBridge destination) is that role's, checked against its policies, in its account.
      const accessKey = /Credential=([A-Z0-9]+)\//.exec(String(req.headers.authorization ?? ''))?.[1] ?? '';
      const session = target.integrator?.session(accessKey);
      const caller: Caller = session
        ? {
            key: `integrator ${session.roleArn}`,
            name: session.name,
            roleArn: session.roleArn,
            policies: session.role.policies as FunctionSpec['policies'],
            account: session.roleArn.split(':')[4] ?? '',
          }
        : fn;
      const callerAccount = caller.account ?? fn.arn.split(':')[4] ?? '';
      const queryForm = json ? undefined : new URLSearchParams(body.toString('utf8'));
      const kmsRequest =
        service === 'TrentService' ? (JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>) : undefined;
      const logsRequest =
        service === 'Logs_20140328'
          ? (JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>)
          : undefined;
      const invoked = INVOKE_PATH.exec(new URL(req.url ?? '/', 'http://x').pathname);
      if (invoked && target.lambdaEndpoint) {
        const name = decodeURIComponent(invoked[1]!);
        checks = [{ action: 'lambda:InvokeFunction', resource: target.functionArns?.get(name) ?? name, context: {} }];
        upstream = new URL(req.url ?? '/', target.lambdaEndpoint);
      } else if (queryForm?.get('Action') === 'AssumeRole' && target.integrator) {
        // Across accounts IAM asks both: the caller's policy, and the role's trust policy as the resource's.
        checks = stsChecks(queryForm);
        const trust = target.integrator.role(queryForm.get('RoleArn') ?? '')?.trust;
        if (trust) resourcePolicies = [trust as PolicyDocument];
        upstream = new URL(req.url ?? '/', target.integrator.endpoint);
      } else if (service === 'AWSEvents' && target.integrator) {
        checks = eventBridgeChecks(target, operation, JSON.parse(body.toString('utf8') || '{}'), callerAccount);
        upstream = new URL(req.url ?? '/', target.integrator.endpoint);
      } else if (session && !service?.startsWith('DynamoDB')) {
        // An integrator's queue, not one of the templates: on fauxqs, named by its URL as it is. fauxqs
        // gives every queue one account (000000000000, this stack's too); an integrator's queue is in
        // the integrator's account, the role's, so its ARN is checked there (a role of that account
        // needs no queue policy, as in AWS).
        const input = queryForm
          ? Object.fromEntries(queryForm)
          : (JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>);
        const op = queryForm ? String(queryForm.get('Action')) : operation;
        const queueUrl = String(input.QueueUrl ?? '');
        checks = [
          {
            action: `sqs:${op.replace(/Batch$/, '')}`,
            resource: queueArnOfUrl(target.region, queueUrl, callerAccount),
            context: {},
          },
        ];
        const host = /^https?:\/\/(?:sqs\.[a-z0-9-]+\.)?([^/]+)/.exec(queueUrl)?.[1] ?? '127.0.0.1';
        upstream = new URL(req.url ?? '/', `http://${host}`);
      } else if (logsRequest) {
        checks = logsChecks(target, operation, logsRequest);
      } else if (kmsRequest) {
        checks = kmsChecks(operation, kmsRequest);
        const key = target.kmsKeys.find((k) => k.arn === checks[0]?.resource);
        if (key) resourcePolicies = [key.policy as unknown as PolicyDocument];
      } else if (service?.startsWith('DynamoDB')) {
        checks = dynamoDbChecks(target, operation, JSON.parse(body.toString('utf8') || '{}'));
        upstream = new URL(req.url ?? '/', options.dynamodbEndpoint);
      } else {
        // SQS, AWS JSON protocol (X-Amz-Target: AmazonSQS.Op) or the older query protocol (Action=Op).
        const form = json ? undefined : new URLSearchParams(body.toString('utf8'));
        const input = form
          ? Object.fromEntries(form)
          : (JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>);
        const op = form ? String(form.get('Action')) : operation;
        const found = sqsChecks(target, op, input);
        checks = found.checks;
        if (!found.queue && op !== 'ListQueues') {
          res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0' });
          return res.end(
            JSON.stringify({
              __type: 'com.amazonaws.sqs#QueueDoesNotExist',
              message: `no queue ${String(input.QueueUrl ?? input.QueueName)} in the templates`,
            }),
          );
        }
        resourcePolicies = (found.queue?.resourcePolicies ?? []) as unknown as PolicyDocument[];
        if (found.queue && input.QueueUrl) {
          if (form) form.set('QueueUrl', found.queue.url);
          else input.QueueUrl = found.queue.url;
          body = Buffer.from(form ? form.toString() : JSON.stringify(input));
        }
        const fauxqs = /^(https?:\/\/)(?:sqs\.[a-z0-9-]+\.)?([^/]+)/.exec(
          found.queue?.url ?? target.queues[0]?.url ?? '',
        );
        upstream = new URL(req.url ?? '/', `http://${fauxqs?.[2] ?? '127.0.0.1'}`);
      }
      for (const check of checks) {
        // Several policies on one resource act as one document.
        const merged = resourcePolicies.length
          ? {
              Version: '2012-10-17',
              Statement: resourcePolicies.flatMap((p) => (Array.isArray(p.Statement) ? p.Statement : [p.Statement])),
            }
          : undefined;
        // A key policy's encryption-context conditions are KMS's to decide (see kms.ts).
        const resourcePolicy =
          merged && kmsRequest
            ? (withEncryptionContextDecided(merged, check.context) as unknown as PolicyDocument)
            : merged;
        const denied = await iam.decide(caller, check, resourcePolicy);
        if (!denied.allowed) {
          const denial = {
            function: session ? `${fn.logicalId} as ${session.roleArn}` : fn.logicalId,
            action: check.action,
            resource: check.resource,
            result: denied.result,
            context: check.context,
          };
          // The integrator's side refused: their role's policy, or its trust (the signer's own policy allowed).
          if (session || (denied.identityAllowed && check.action === 'sts:AssumeRole'))
            options.onIntegratorDenied?.(denial);
          else options.onDenied(denial);
          return deny(res, caller, callerAccount, check, json);
        }
      }
      if (logsRequest) {
        const [status, answer] = options.logs.answer(operation, logsRequest);
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
        return res.end(JSON.stringify(answer));
      }
      if (kmsRequest) {
        const [status, answer] = answerKms(operation, kmsRequest);
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
        return res.end(JSON.stringify(answer));
      }
      forward(req, res, upstream as URL, body);
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`rehearsal proxy: ${(err as Error).message}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}
