import { newContext } from '#shared/context.ts';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '#db/core/client.ts';
import type { Key } from '#db/keys.ts';

/**
 * Local stack only: how far its stream poller has read, per shard, so that a restart resumes
 * where it stopped instead of replaying the whole stream (in AWS the event-source mapping keeps
 * this). Kept in the table beside the stream it describes: a new table is a new stream.
 */
export interface ShardPosition {
  /** The last sequence number handed to the fan-out and finished. */
  sequenceNumber?: string;
  /** The shard is closed and was read to its end. */
  done?: boolean;
}

export type StreamPosition = Record<string, ShardPosition>;

/** The fan-out's position has no consumer suffix. */
const positionKey = (streamArn: string, consumer?: string): Key => ({
  pk: 'LOCAL#STREAM',
  sk: `POSITION#${streamArn}${consumer ? `#${consumer}` : ''}`,
});

/** Not `outbox`: the stream filter never passes these writes back to the poller. */
const TYPE = 'stream_position';

export async function loadStreamPosition(streamArn: string, consumer?: string): Promise<StreamPosition> {
  const out = await send(
    newContext(),
    new GetCommand({ TableName: tableName(), Key: positionKey(streamArn, consumer), ConsistentRead: true }),
  );
  return (out.Item?.shards as StreamPosition | undefined) ?? {};
}

export async function saveStreamPosition(streamArn: string, shards: StreamPosition, consumer?: string): Promise<void> {
  await send(
    newContext(),
    new PutCommand({ TableName: tableName(), Item: { ...positionKey(streamArn, consumer), type: TYPE, shards } }),
  );
}
