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
import { dynamoDbChecks, sqsChecks, type AuthorizationCheck, type RequestTarget } from './aws-requests.ts';
import { answerKms, kmsChecks, withEncryptionContextDecided } from './kms.ts';
import { logsChecks, type RehearsalLogs } from './logs.ts';
import type { FunctionSpec, PolicyDocument } from './functions.ts';
import type { Denial, IamEvaluator } from './iam.ts';

export interface ProxyOptions {
  fn: FunctionSpec;
  target: RequestTarget;
  iam: IamEvaluator;
  dynamodbEndpoint: string;
  /** CloudWatch Logs (the access log group and Logs Insights over it, logs.ts). */
  logs: RehearsalLogs;
  onDenied: (denial: Denial) => void;
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

function deny(res: ServerResponse, fn: FunctionSpec, check: AuthorizationCheck, json: boolean): void {
  const role = fn.roleArn.split('/').pop();
  const message = `User: arn:aws:sts::${fn.arn.split(':')[4]}:assumed-role/${role}/${fn.name} is not authorized to perform: ${check.action} on resource: ${check.resource} because no identity-based policy allows the ${check.action} action`;
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
      const kmsRequest =
        service === 'TrentService' ? (JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>) : undefined;
      const logsRequest =
        service === 'Logs_20140328'
          ? (JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>)
          : undefined;
      if (logsRequest) {
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
        const denied = await iam.decide(fn, check, resourcePolicy);
        if (!denied.allowed) {
          options.onDenied({
            function: fn.logicalId,
            action: check.action,
            resource: check.resource,
            result: denied.result,
            context: check.context,
          });
          return deny(res, fn, check, json);
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
