import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#db/core/client.ts';

/**
 * Where the running local stack's AWS stand-ins listen (its SQS emulator, and the integrator's STS
 * and EventBridge of integrator-aws.ts), written into its table at start: `npm run admin` runs in a
 * process of its own and pings an SQS or EventBridge destination itself (functions/webhooks/ping.ts),
 * so it points its SDK at the same ones. Local stack only: in AWS the SDK finds the services.
 */
const MARKER = { pk: 'LOCAL#AWS', sk: 'ENDPOINTS' };

export interface LocalEndpoints {
  sqs: string;
  sts: string;
  eventbridge: string;
}

export async function recordLocalEndpoints(endpoints: LocalEndpoints): Promise<void> {
  await db().send(new PutCommand({ TableName: tableName(), Item: { ...MARKER, ...endpoints } }));
}

/** The CLI's side: sets each SDK endpoint variable the environment leaves unset (none recorded: nothing). */
export async function useLocalEndpoints(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const item = (await db().send(new GetCommand({ TableName: tableName(), Key: MARKER }))).Item as
    | Partial<LocalEndpoints>
    | undefined;
  if (!item) return;
  if (item.sqs) env.AWS_ENDPOINT_URL_SQS ||= item.sqs;
  if (item.sts) env.AWS_ENDPOINT_URL_STS ||= item.sts;
  if (item.eventbridge) env.AWS_ENDPOINT_URL_EVENTBRIDGE ||= item.eventbridge;
  env.AWS_ACCESS_KEY_ID ||= 'local';
  env.AWS_SECRET_ACCESS_KEY ||= 'local';
}
