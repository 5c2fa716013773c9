import { randomUUID } from 'node:crypto';
import { eventBridgeEntrySize, EVENTBRIDGE_MAX_ENTRY_BYTES } from '#domain/webhook/destination.ts';

/** An event a bus of the integrator's stand-in received (integrator-aws.ts reads them back over HTTP). */
export interface ReceivedEvent {
  id: string;
  bus: string;
  source: string;
  detail_type: string;
  detail: string;
  time: string | null;
  received_at: string;
  /** The assumed role that sent it. */
  role: string;
}

/** An answer of the stand-in's EventBridge: a status, the JSON body, and the error type of a refusal. */
export interface EventsAnswer {
  status: number;
  body: unknown;
  errorType?: string;
}

const refuse = (status: number, body: { message: string }, errorType: string): EventsAnswer => ({
  status,
  body,
  errorType,
});

/**
 * EventBridge `PutEvents` as AWS validates it (integrator-aws.ts says what): the request signed with
 * a live session of the stand-in's STS, 1 to 10 entries, at most 256 KiB in all as EventBridge counts
 * it, and each entry's own checks (Source, DetailType, a JSON object Detail, no `aws.` source, a bus
 * that exists), which fail the entry, not the request. An accepted entry is kept on its bus.
 */
export function answerPutEvents(
  text: string,
  session: { role: string; expiresMs: number } | undefined,
  busOf: (arn: string) => ReceivedEvent[] | undefined,
  region: string,
): EventsAnswer {
  if (!session)
    return refuse(
      400,
      { message: 'The security token included in the request is invalid.' },
      'UnrecognizedClientException',
    );
  if (session.expiresMs <= Date.now())
    return refuse(400, { message: 'The security token included in the request is expired' }, 'ExpiredTokenException');
  let body: { Entries?: Record<string, unknown>[] };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return refuse(400, { message: 'Malformed request' }, 'SerializationException');
  }
  const entries = Array.isArray(body.Entries) ? body.Entries : [];
  if (entries.length < 1 || entries.length > 10)
    return refuse(
      400,
      {
        message: `1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length between 1 and 10`,
      },
      'ValidationException',
    );
  const total = entries.reduce(
    (n, e) =>
      n +
      eventBridgeEntrySize({
        Time: e.Time,
        Source: typeof e.Source === 'string' ? e.Source : '',
        DetailType: typeof e.DetailType === 'string' ? e.DetailType : '',
        Detail: typeof e.Detail === 'string' ? e.Detail : '',
        Resources: Array.isArray(e.Resources) ? (e.Resources as string[]) : [],
      }),
    0,
  );
  if (total > EVENTBRIDGE_MAX_ENTRY_BYTES)
    return refuse(
      400,
      { message: 'Total size of the entries in the request is over the limit.' },
      'ValidationException',
    );
  const results = entries.map((e) => {
    const fail = (ErrorCode: string, ErrorMessage: string) => ({ ErrorCode, ErrorMessage });
    if (typeof e.Source !== 'string' || e.Source === '')
      return fail('InvalidArgument', 'Parameter Source is not valid. Reason: Source is a required argument.');
    if (typeof e.DetailType !== 'string' || e.DetailType === '')
      return fail('InvalidArgument', 'Parameter DetailType is not valid. Reason: DetailType is a required argument.');
    if (typeof e.Detail !== 'string')
      return fail('InvalidArgument', 'Parameter Detail is not valid. Reason: Detail is a required argument.');
    let detail: unknown;
    try {
      detail = JSON.parse(e.Detail);
    } catch {
      return fail('MalformedDetail', 'Detail is malformed.');
    }
    if (detail === null || typeof detail !== 'object' || Array.isArray(detail))
      return fail('MalformedDetail', 'Detail is malformed.');
    if (e.Source.startsWith('aws.'))
      return fail('NotAuthorizedForSourceException', `Not authorized for the source ${e.Source}.`);
    const bus =
      typeof e.EventBusName === 'string' && e.EventBusName !== ''
        ? e.EventBusName
        : `arn:aws:events:${region}:${session.role.split(':')[4]}:event-bus/default`;
    const received = busOf(bus);
    if (!received) return fail('ResourceNotFoundException', `Event bus ${bus} does not exist.`);
    const id = randomUUID();
    const time =
      typeof e.Time === 'number' ? new Date(e.Time * 1000).toISOString() : typeof e.Time === 'string' ? e.Time : null;
    received.push({
      id,
      bus,
      source: e.Source,
      detail_type: e.DetailType,
      detail: e.Detail,
      time,
      received_at: new Date().toISOString(),
      role: session.role,
    });
    return { EventId: id };
  });
  const failed = results.filter((r) => 'ErrorCode' in r).length;
  return { status: 200, body: { FailedEntryCount: failed, Entries: results } };
}
