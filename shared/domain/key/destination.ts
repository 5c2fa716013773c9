import { randomBytes } from 'node:crypto';

/**
 * Where a key's events go (docs/destinations.md): a signed POST to a URL (`webhook`), a message on
 * an SQS queue in the integrator's own AWS account (`sqs`; a FIFO queue keeps a store's events in
 * order), or an event on an EventBridge bus there (`eventbridge`). The AWS kinds are reached by
 * assuming a role in that account which trusts the service's signer role and names the key's
 * external id (`aws_external_id`): AWS's confused-deputy protection for a third party.
 */
export type Destination =
  | { kind: 'webhook'; url: string }
  | { kind: 'sqs'; queue_url: string; queue_arn: string; role_arn: string; fifo: boolean }
  | { kind: 'eventbridge'; bus_arn: string; role_arn: string };
export type AwsDestination = Exclude<Destination, { kind: 'webhook' }>;

export const isAwsDestination = (d: Destination | null): d is AwsDestination => d !== null && d.kind !== 'webhook';

/** A FIFO queue: its deliveries go out one at a time per group, in sequence order (shared/app/ordered-delivery.ts). */
export const isOrdered = (d: Destination | null): d is Extract<Destination, { kind: 'sqs' }> =>
  d?.kind === 'sqs' && d.fifo;

/**
 * The only roles the signer may assume: the name starts with this (its IAM policy allows
 * `arn:aws:iam::*:role/store-events-*` and nothing else, infra/constructs/webhook-pipeline.ts), so a
 * misconfigured key cannot make it assume an unrelated role of any account.
 */
export const ROLE_NAME_PREFIX = 'store-events-';
/** The resource of the signer's `sts:AssumeRole` grant (the partition is the stack's). */
export const assumableRoleArnPattern = (partition: string) => `arn:${partition}:iam::*:role/${ROLE_NAME_PREFIX}*`;

/** Per-key external ids start with this; the signer's grant requires it of every AssumeRole it makes. */
export const EXTERNAL_ID_PREFIX = 'sie_';

/**
 * A new external id: 128 random bits. Made by the service, never chosen by the integrator, so one
 * integrator cannot name another's role with an id it knows (AWS: "How to use an external ID").
 */
export const generateExternalId = (): string => EXTERNAL_ID_PREFIX + randomBytes(16).toString('hex');

type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

const REGION = '[a-z]{2}(?:-gov)?-[a-z]+-\\d';
const ACCOUNT = '\\d{12}';
/** SQS queue names: 1-80 of letters, digits, `-` and `_`, a FIFO queue's ending in `.fifo` (counted). */
const QUEUE_NAME = /^[A-Za-z0-9_-]{1,75}(?:\.fifo)?$|^[A-Za-z0-9_-]{1,80}$/;

/**
 * An SQS queue URL as AWS gives it (`https://sqs.<region>.amazonaws.com/<account>/<name>`, or the
 * older `https://<region>.queue.amazonaws.com/...`), or, where the local stack allows loopback
 * (`allowLocal`), its emulator's (`http://sqs.<region>.127.0.0.1:<port>/<account>/<name>`, which the
 * WHATWG parser refuses, hence the patterns). The queue's ARN is what its IAM policy names.
 */
export function parseQueueUrl(
  raw: string,
  allowLocal: boolean,
): Parsed<{ queue_url: string; queue_arn: string; fifo: boolean }> {
  const aws =
    new RegExp(`^https://sqs\\.(${REGION})\\.amazonaws\\.com/(${ACCOUNT})/([^/?#]+)$`).exec(raw) ??
    new RegExp(`^https://(${REGION})\\.queue\\.amazonaws\\.com/(${ACCOUNT})/([^/?#]+)$`).exec(raw);
  const local = allowLocal
    ? new RegExp(
        `^http://(?:sqs\\.(${REGION})\\.)?(?:127\\.0\\.0\\.1|localhost):\\d{1,5}/(${ACCOUNT})/([^/?#]+)$`,
      ).exec(raw)
    : null;
  const m = aws ?? local;
  if (!m)
    return {
      ok: false,
      reason:
        'sqs_queue_url must be a queue URL like https://sqs.eu-west-1.amazonaws.com/123456789012/store-events.fifo',
    };
  const [, region = 'us-east-1', account, name] = m as unknown as [string, string | undefined, string, string];
  if (!QUEUE_NAME.test(name))
    return { ok: false, reason: 'sqs_queue_url names no valid queue (1-80 letters, digits, - or _, then .fifo)' };
  return {
    ok: true,
    value: { queue_url: raw, queue_arn: `arn:aws:sqs:${region}:${account}:${name}`, fifo: name.endsWith('.fifo') },
  };
}

/** An EventBridge bus ARN (`arn:aws:events:<region>:<account>:event-bus/<name>`, `default` included). */
export function parseBusArn(raw: string): Parsed<string> {
  const ok = new RegExp(`^arn:aws:events:${REGION}:${ACCOUNT}:event-bus/[A-Za-z0-9._-]{1,256}$`).test(raw);
  return ok
    ? { ok: true, value: raw }
    : {
        ok: false,
        reason:
          'eventbridge_bus_arn must be a bus ARN like arn:aws:events:eu-west-1:123456789012:event-bus/store-events',
      };
}

/**
 * A role the signer may assume: no path, and its name starts with `store-events-` (IAM role names
 * are at most 64 characters of letters, digits and `+=,.@_-`).
 */
export function parseRoleArn(raw: string): Parsed<string> {
  const ok = new RegExp(`^arn:aws:iam::${ACCOUNT}:role/${ROLE_NAME_PREFIX}[\\w+=,.@-]{1,51}$`).test(raw);
  return ok
    ? { ok: true, value: raw }
    : {
        ok: false,
        reason: `role_arn must be a role ARN whose name starts with ${ROLE_NAME_PREFIX}, like arn:aws:iam::123456789012:role/${ROLE_NAME_PREFIX}crm (docs/destinations.md)`,
      };
}

/** The region an AWS destination lives in (its client's region), from its ARN. */
export function regionOf(d: AwsDestination): string {
  return (d.kind === 'sqs' ? d.queue_arn : d.bus_arn).split(':')[3] as string;
}

/** What `webhooks ping` shows: the destination without its derived ARN. */
export function destinationView(d: Destination | null) {
  if (d === null) return null;
  if (d.kind === 'webhook') return { kind: d.kind, url: d.url };
  if (d.kind === 'sqs') return { kind: d.kind, queue_url: d.queue_url, role_arn: d.role_arn, fifo: d.fifo };
  return { kind: d.kind, bus_arn: d.bus_arn, role_arn: d.role_arn };
}

/** A short name of the target for log lines and operational events (no account number). */
export function targetName(d: Destination): string {
  if (d.kind === 'webhook') {
    try {
      return new URL(d.url).host;
    } catch {
      return 'invalid';
    }
  }
  const arn = d.kind === 'sqs' ? d.queue_arn : d.bus_arn;
  return `${d.kind}:${arn.split(':').slice(5).join(':')}`;
}
