/**
 * The integrator's AWS account, as much of it as an SQS or EventBridge destination touches
 * (docs/destinations.md), for `npm start` and the tests, with no AWS account:
 *
 * - **STS `AssumeRole`** (AWS query protocol, XML answers): a role exists once it is put
 *   (`PUT /_local/roles?arn=<role ARN>`, the body its trust policy, or the Properties of its
 *   CloudFormation `AWS::IAM::Role`, `AssumeRolePolicyDocument` and `Policies`, as in
 *   docs/destinations.md's snippet; the rehearsal checks a session's calls against those
 *   Policies, emulation/rehearsal/proxy.ts). The call is refused as STS refuses it
 *   (403 AccessDenied, the same words for an unknown role and a refusing one) unless an Allow
 *   statement for `sts:AssumeRole` holds, its `StringEquals` `sts:ExternalId` (when it has one) equal
 *   to the request's. Its principal is not checked here: the signer's side of the trust, and its own
 *   IAM, are the rehearsal's (emulation/rehearsal). Parameters are validated as STS does (the role
 *   ARN, a 2-64 character session name, a 2-1224 character external id, 900-3600 s). The session's
 *   keys are remembered until they expire.
 * - **EventBridge `PutEvents`** (AWS JSON 1.1): the request must be signed with a live session of
 *   this STS (else UnrecognizedClientException / ExpiredTokenException); 1 to 10 entries; their total
 *   size, counted as EventBridge counts it, at most 256 KiB (ValidationException); each entry needs
 *   `Source`, `DetailType` and a JSON object `Detail` (the entry fails with InvalidArgument or
 *   MalformedDetail), a `Source` not starting with `aws.` (NotAuthorizedForSourceException), and a
 *   bus that exists (ResourceNotFoundException): an account's `default` bus, or one put with
 *   `PUT /_local/event-buses?arn=<bus ARN>`. What a bus received is read back with
 *   `GET /_local/event-buses/events?arn=<bus ARN>`.
 *
 * SQS needs nothing here: the queue is on the stack's own SQS emulator (fauxqs, webhook-pipeline.ts),
 * created and read with the AWS SDK pointed at it. Everything is in memory: a restart forgets it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerPutEvents, type ReceivedEvent } from './integrator-events.ts';

export type { ReceivedEvent };

/** A role as put: its trust policy and the identity policies its sessions act under. */
export interface IntegratorRole {
  trust: unknown;
  policies: { name: string; document: { Statement: unknown } }[];
}

export interface IntegratorAws {
  endpoint: string;
  /** Puts a role: its trust policy, or CloudFormation Properties with AssumeRolePolicyDocument and Policies. */
  putRole(arn: string, definition: unknown): void;
  /** A role as put (the rehearsal evaluates its trust policy as AssumeRole's resource policy). */
  role(arn: string): IntegratorRole | undefined;
  /** The role and session name a live session's access key belongs to (the rehearsal's IAM check of its calls). */
  session(accessKeyId: string): { roleArn: string; name: string; role: IntegratorRole } | undefined;
  putBus(arn: string): void;
  events(busArn: string): ReceivedEvent[];
  stop(): Promise<void>;
}

type Statement = {
  Effect?: string;
  Action?: string | string[];
  Condition?: Record<string, Record<string, string | string[]>>;
};

const ROLE_ARN = /^arn:aws:iam::(\d{12}):role\/[\w+=,.@/-]{1,128}$/;
const BUS_ARN = /^arn:aws:events:([a-z0-9-]+):(\d{12}):event-bus\/([A-Za-z0-9._/-]{1,256})$/;
const SESSION_NAME = /^[\w+=,.@-]{2,64}$/;
const EXTERNAL_ID = /^[\w+=,.@:/-]{2,1224}$/;

async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const xmlEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function stsError(res: ServerResponse, status: number, code: string, message: string) {
  res.writeHead(status, { 'content-type': 'text/xml' });
  res.end(
    `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${xmlEscape(message)}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`,
  );
}

function jsonAnswer(res: ServerResponse, status: number, body: unknown, errorType?: string) {
  res.writeHead(status, {
    'content-type': 'application/x-amz-json-1.1',
    ...(errorType ? { 'x-amzn-errortype': errorType } : {}),
  });
  res.end(JSON.stringify(errorType ? { __type: errorType, message: (body as { message: string }).message } : body));
}

/** Whether the trust policy lets a caller assume the role with `externalId` (undefined: none given). */
export function trusts(policy: unknown, externalId: string | undefined): boolean {
  const statements = [(policy as { Statement?: unknown })?.Statement ?? []].flat() as Statement[];
  return statements.some((s) => {
    if (s.Effect !== 'Allow') return false;
    if (![s.Action ?? []].flat().some((a) => a === 'sts:AssumeRole' || a === 'sts:*' || a === '*')) return false;
    const wanted = s.Condition?.StringEquals?.['sts:ExternalId'];
    return wanted === undefined || (externalId !== undefined && [wanted].flat().includes(externalId));
  });
}

/** A role from what was put: a bare trust policy, or `AWS::IAM::Role` Properties. */
export function roleOf(definition: unknown): IntegratorRole {
  const d = (definition ?? {}) as {
    AssumeRolePolicyDocument?: unknown;
    Policies?: { PolicyName?: string; PolicyDocument?: { Statement: unknown } }[];
  };
  if (d.AssumeRolePolicyDocument === undefined) return { trust: definition, policies: [] };
  return {
    trust: d.AssumeRolePolicyDocument,
    policies: (d.Policies ?? []).flatMap((p, i) =>
      p.PolicyDocument ? [{ name: p.PolicyName ?? `policy-${i}`, document: p.PolicyDocument }] : [],
    ),
  };
}

export async function startIntegratorAws(region: string): Promise<IntegratorAws> {
  const roles = new Map<string, IntegratorRole>();
  const sessions = new Map<string, { role: string; name: string; expiresMs: number }>();
  const buses = new Map<string, ReceivedEvent[]>();
  const busOf = (arn: string) => {
    if (!buses.has(arn) && BUS_ARN.exec(arn)?.[3] === 'default') buses.set(arn, []);
    return buses.get(arn);
  };

  function assumeRole(form: URLSearchParams, res: ServerResponse) {
    const arn = form.get('RoleArn') ?? '';
    const session = form.get('RoleSessionName') ?? '';
    const externalId = form.get('ExternalId') ?? undefined;
    const duration = Number(form.get('DurationSeconds') ?? 3600);
    if (!ROLE_ARN.test(arn))
      return stsError(
        res,
        400,
        'ValidationError',
        `1 validation error detected: Value '${arn}' at 'roleArn' failed to satisfy constraint`,
      );
    if (!SESSION_NAME.test(session))
      return stsError(
        res,
        400,
        'ValidationError',
        `1 validation error detected: Value '${session}' at 'roleSessionName' failed to satisfy constraint`,
      );
    if (externalId !== undefined && !EXTERNAL_ID.test(externalId))
      return stsError(
        res,
        400,
        'ValidationError',
        "1 validation error detected: Value at 'externalId' failed to satisfy constraint",
      );
    if (!Number.isInteger(duration) || duration < 900 || duration > 3600)
      return stsError(
        res,
        400,
        'ValidationError',
        'The requested DurationSeconds exceeds the MaxSessionDuration set for this role.',
      );
    const role = roles.get(arn);
    if (role === undefined || !trusts(role.trust, externalId))
      return stsError(
        res,
        403,
        'AccessDenied',
        `User: arn:aws:sts::000000000000:assumed-role/signer/local is not authorized to perform: sts:AssumeRole on resource: ${arn}`,
      );
    const accessKeyId = `ASIA${randomBytes(8).toString('hex').toUpperCase()}`;
    const expiresMs = Date.now() + duration * 1000;
    sessions.set(accessKeyId, { role: arn, name: session, expiresMs });
    const account = ROLE_ARN.exec(arn)?.[1];
    const roleName = arn.split('/').pop();
    res.writeHead(200, { 'content-type': 'text/xml' });
    res.end(
      `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><AssumedRoleUser><AssumedRoleId>AROA${randomBytes(8).toString('hex').toUpperCase()}:${session}</AssumedRoleId><Arn>arn:aws:sts::${account}:assumed-role/${roleName}/${session}</Arn></AssumedRoleUser><Credentials><AccessKeyId>${accessKeyId}</AccessKeyId><SecretAccessKey>${randomBytes(30).toString('base64')}</SecretAccessKey><SessionToken>${randomBytes(48).toString('base64')}</SessionToken><Expiration>${new Date(expiresMs).toISOString()}</Expiration></Credentials></AssumeRoleResult><ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></AssumeRoleResponse>`,
    );
  }

  function putEvents(req: IncomingMessage, text: string, res: ServerResponse) {
    const key = /Credential=([A-Z0-9]+)\//.exec(String(req.headers.authorization ?? ''))?.[1] ?? '';
    const answer = answerPutEvents(text, sessions.get(key), busOf, region);
    jsonAnswer(res, answer.status, answer.body, answer.errorType);
  }

  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://local');
      const text = await readText(req);
      if (url.pathname === '/_local/roles' && req.method === 'PUT') {
        const arn = url.searchParams.get('arn') ?? '';
        if (!ROLE_ARN.test(arn)) return jsonAnswer(res, 400, { message: 'arn must be a role ARN' }, 'ValidationError');
        roles.set(arn, roleOf(JSON.parse(text || '{}')));
        return jsonAnswer(res, 200, { arn });
      }
      if (url.pathname === '/_local/event-buses' && req.method === 'PUT') {
        const arn = url.searchParams.get('arn') ?? '';
        if (!BUS_ARN.test(arn))
          return jsonAnswer(res, 400, { message: 'arn must be an event bus ARN' }, 'ValidationError');
        if (!buses.has(arn)) buses.set(arn, []);
        return jsonAnswer(res, 200, { arn });
      }
      if (url.pathname === '/_local/event-buses/events' && req.method === 'GET') {
        const arn = url.searchParams.get('arn') ?? '';
        const received = busOf(arn);
        if (!received) return jsonAnswer(res, 404, { message: `no event bus ${arn}` }, 'ResourceNotFoundException');
        return jsonAnswer(res, 200, { data: received });
      }
      const target = String(req.headers['x-amz-target'] ?? '');
      if (target === 'AWSEvents.PutEvents') return putEvents(req, text, res);
      if (target.startsWith('AWSEvents.'))
        return jsonAnswer(
          res,
          400,
          { message: `the local stand-in answers PutEvents only, not ${target}` },
          'UnsupportedOperation',
        );
      const form = new URLSearchParams(text);
      if (form.get('Action') === 'AssumeRole') return assumeRole(form, res);
      stsError(
        res,
        400,
        'InvalidAction',
        `the local stand-in answers AssumeRole only, not ${form.get('Action') ?? req.url}`,
      );
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`local AWS stand-in: ${(err as Error).message}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    endpoint,
    putRole: (arn, definition) => void roles.set(arn, roleOf(definition)),
    role: (arn) => roles.get(arn),
    session: (accessKeyId) => {
      const s = sessions.get(accessKeyId);
      const role = s && s.expiresMs > Date.now() ? roles.get(s.role) : undefined;
      return s && role ? { roleArn: s.role, name: s.name, role } : undefined;
    },
    putBus: (arn) => void (buses.has(arn) || buses.set(arn, [])),
    events: (arn) => [...(busOf(arn) ?? [])],
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
