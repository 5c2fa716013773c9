/**
 * The local stand-in for a DynamoDB stream event-source mapping (see webhook-pipeline.ts and
 * name-indexer.ts; each mapping is a poller of its own, with its own saved position).
 *
 * DescribeStream (again every few seconds, to follow new shards, children after their parents),
 * GetShardIterator (AFTER_SEQUENCE_NUMBER from the saved position, else TRIM_HORIZON: LATEST
 * would lose what was written while the stack was down) and GetRecords with iterator chaining.
 * Only records that pass the mapping's filter (by default OUTBOX_STREAM_FILTER) reach the handler, as a DynamoDBStreamEvent; a
 * reported failure is retried from its sequence number, and a record that still fails after
 * STREAM_RETRY_ATTEMPTS is logged and skipped (what bisect + on-failure destination do in AWS).
 * The position is saved in the table after each batch that reached the handler, so a restart
 * neither loses nor replays everything.
 */
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
  type ShardIteratorType,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { config } from '#shared/config.ts';
import { loadStreamPosition, saveStreamPosition, type ShardPosition, type StreamPosition } from './stream-position.ts';
import { isOutboxInsert } from '#db/event/outbox-stream-filter.ts';
import { errorFields, log as logJson } from '#shared/log.ts';
import { sleep } from './sleep.ts';
import { nextTableWrite, tableWritesSoFar } from './table-writes.ts';

const DESCRIBE_EVERY_MS = 5000;
/**
 * Rounds start at most this often unless the last one filled a batch: a poller woken by every write
 * of a busy stack would otherwise read the stream a record at a time.
 */
const MIN_ROUND_MS = 100;

/** What one round on a shard found: a full batch (more may wait), the shard's end, or nothing new. */
type Round = 'more' | 'caught-up' | 'empty';
const STREAM_RETRY_ATTEMPTS = 3;
/**
 * Records one GetRecords asks for. Not the API's 1,000: DynamoDB Local then returned fewer than a
 * page held and moved its iterator past the rest (records lost, 2026-11-28); a batch is gathered
 * from several pages instead.
 */
const GET_RECORDS_LIMIT = 100;
/** Lambda's default batch size for a stream mapping. */
const DEFAULT_BATCH_SIZE = 100;

/** The record as Lambda hands it over: JSON types (epoch seconds, base64 binaries) and the ARN. */
function toLambdaRecord(r: StreamRecord, streamArn: string): DynamoDBRecord {
  const json = JSON.parse(
    JSON.stringify(r, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v)),
  ) as DynamoDBRecord;
  const created = r.dynamodb?.ApproximateCreationDateTime;
  if (json.dynamodb && created) json.dynamodb.ApproximateCreationDateTime = Math.floor(created.getTime() / 1000);
  return { ...json, eventSourceARN: streamArn };
}

interface ShardState {
  parent: string | undefined;
  iterator: string | undefined;
  position: ShardPosition;
  failures: number;
}

/** What an event-source mapping configures; the defaults are the local stack's (the outbox filter). */
export interface StreamMappingOptions {
  /** An event-filter pattern's test (db/core/stream-filter.ts), given the record as the SDK reads it. */
  filter?: (record: StreamRecord) => boolean;
  batchSize?: number;
  retryAttempts?: number;
  /** Whose position this is, when more than one poller reads the stream (the fan-out's has none). */
  consumer?: string;
  /** Called with the record given up on (the mapping's on-failure destination). */
  onFailure?: (record: DynamoDBRecord) => Promise<void>;
}

export class StreamPoller {
  private readonly client: DynamoDBStreamsClient;
  private readonly shards = new Map<string, ShardState>();
  private saved: StreamPosition = {};
  private lastDescribe = 0;

  constructor(
    private readonly streamArn: string,
    endpoint: string,
    private readonly handle: (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse>,
    private readonly signal: AbortSignal,
    private readonly mapping: StreamMappingOptions = {},
  ) {
    const local = !new URL(endpoint).hostname.endsWith('.amazonaws.com');
    this.client = new DynamoDBStreamsClient({
      region: config().region,
      ...(local ? { endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    });
    // As shared/db/core/client.ts does for the product's client: the SDK's logger middleware walks every
    // answer through its sensitive-data filter to hand it to the no-op logger. Here that is every
    // record of the table's stream (each request's key update among them), read by each poller.
    this.client.middlewareStack.remove('loggerMiddleware');
  }

  async run(): Promise<void> {
    this.saved = await loadStreamPosition(this.streamArn, this.mapping.consumer);
    while (!this.signal.aborted) {
      const started = Date.now();
      const seen = tableWritesSoFar();
      const rounds: Round[] = [];
      try {
        if (Date.now() - this.lastDescribe > DESCRIBE_EVERY_MS) await this.describe();
        for (const [id, shard] of this.shards) {
          if (this.signal.aborted) break;
          if (shard.position.done) continue;
          const parent = shard.parent ? this.shards.get(shard.parent) : undefined;
          if (parent && !parent.position.done) continue; // a parent's records come first
          rounds.push(await this.poll(id, shard));
        }
      } catch (err) {
        if (this.signal.aborted) break;
        logJson('error', 'local stream poller failed; retrying', errorFields(err));
        await sleep(1000, this.signal);
      }
      if (rounds.includes('more')) continue;
      if (!rounds.includes('caught-up')) await nextTableWrite(seen, this.signal);
      const pause = started + MIN_ROUND_MS - Date.now();
      if (pause > 0) await sleep(pause, this.signal);
    }
    this.client.destroy();
  }

  private async describe(): Promise<void> {
    const seen = new Set<string>();
    let start: string | undefined;
    do {
      const out = await this.client.send(
        new DescribeStreamCommand({ StreamArn: this.streamArn, ExclusiveStartShardId: start }),
      );
      for (const s of out.StreamDescription?.Shards ?? []) {
        if (!s.ShardId) continue;
        seen.add(s.ShardId);
        if (!this.shards.has(s.ShardId)) {
          this.shards.set(s.ShardId, {
            parent: s.ParentShardId,
            iterator: undefined,
            position: { ...this.saved[s.ShardId] },
            failures: 0,
          });
        }
      }
      start = out.StreamDescription?.LastEvaluatedShardId;
    } while (start);
    // Shards past the stream's 24 h retention are gone for good.
    for (const id of this.shards.keys()) if (!seen.has(id)) this.shards.delete(id);
    this.lastDescribe = Date.now();
  }

  private async iterator(
    shardId: string,
    type: ShardIteratorType,
    sequenceNumber?: string,
  ): Promise<string | undefined> {
    const out = await this.client.send(
      new GetShardIteratorCommand({
        StreamArn: this.streamArn,
        ShardId: shardId,
        ShardIteratorType: type,
        SequenceNumber: sequenceNumber,
      }),
    );
    return out.ShardIterator;
  }

  private async resume(shardId: string, position: ShardPosition): Promise<string | undefined> {
    if (!position.sequenceNumber) return this.iterator(shardId, 'TRIM_HORIZON');
    try {
      return await this.iterator(shardId, 'AFTER_SEQUENCE_NUMBER', position.sequenceNumber);
    } catch (err) {
      // The saved record was trimmed away: everything still in the shard is newer than it.
      if ((err as Error).name !== 'TrimmedDataAccessException') throw err;
      return this.iterator(shardId, 'TRIM_HORIZON');
    }
  }

  private async save(): Promise<void> {
    const shards: StreamPosition = {};
    for (const [id, s] of this.shards) shards[id] = s.position;
    await saveStreamPosition(this.streamArn, shards, this.mapping.consumer);
  }

  /**
   * One round on one shard: GetRecords pages until they hold a batch of the mapping's size of
   * matching records, handed over as Lambda forms batches (from filtered records: the stream
   * carries every write of the table, each request's key update among them, and few are this
   * mapping's).
   */
  private async poll(shardId: string, shard: ShardState): Promise<Round> {
    shard.iterator ??= await this.resume(shardId, shard.position);
    if (!shard.iterator) return 'empty';
    // Pages read until they hold a batch of matching records or the shard has nothing more now.
    const records: StreamRecord[] = [];
    let matching: DynamoDBRecord[] = [];
    const size = this.mapping.batchSize ?? DEFAULT_BATCH_SIZE;
    let next: string | undefined = shard.iterator;
    let page: StreamRecord[];
    let expired = false;
    do {
      try {
        const out: GetRecordsCommandOutput = await this.client.send(
          new GetRecordsCommand({ ShardIterator: next, Limit: GET_RECORDS_LIMIT }),
        );
        page = out.Records ?? [];
        next = out.NextShardIterator;
      } catch (err) {
        const name = (err as Error).name;
        if (name !== 'ExpiredIteratorException' && name !== 'TrimmedDataAccessException') throw err;
        // What was read is handled; the next round resumes after it from a fresh iterator.
        expired = true;
        if (records.length > 0) break;
        shard.iterator = undefined;
        return 'empty';
      }
      records.push(...page);
      // Filtered before the conversion. A pattern names eventName and string attributes, which read
      // the same in the SDK's record as in Lambda's.
      matching = matching.concat(
        page.filter(this.mapping.filter ?? isOutboxInsert).map((r) => toLambdaRecord(r, this.streamArn)),
      );
    } while (page.length > 0 && next && matching.length < size);
    for (let start = 0; start < matching.length; start += size) {
      const batch = matching.slice(start, start + size);
      let failed: string | undefined;
      try {
        failed = (await this.handle({ Records: batch })).batchItemFailures[0]?.itemIdentifier;
      } catch (err) {
        logJson('error', 'stream handler threw; retrying the batch', errorFields(err));
        failed = batch[0]?.dynamodb?.SequenceNumber;
      }
      if (failed !== undefined) return this.failed(shardId, shard, batch, failed);
      shard.failures = 0;
    }
    const last = records.at(-1)?.dynamodb?.SequenceNumber;
    if (last) shard.position.sequenceNumber = last;
    shard.iterator = expired ? undefined : next;
    if (!expired && !shard.iterator) {
      shard.position.done = true;
      this.lastDescribe = 0; // a closed shard means a child to pick up
    }
    // Saved only when the handler ran or a shard closed: the save is a table write, and so a
    // stream record itself; saving after every record would feed the poller its own writes.
    if (matching.length > 0 || shard.position.done) await this.save();
    if (records.length === 0) return 'empty';
    return expired || matching.length >= size ? 'more' : 'caught-up';
  }

  /** A batch reported `failed`: retried from it, or after the last retry skipped (the on-failure destination). */
  private async failed(shardId: string, shard: ShardState, batch: DynamoDBRecord[], failed: string): Promise<Round> {
    shard.failures += 1;
    if (shard.failures <= (this.mapping.retryAttempts ?? STREAM_RETRY_ATTEMPTS)) {
      await sleep(250 * 2 ** shard.failures, this.signal);
      shard.iterator = await this.iterator(shardId, 'AT_SEQUENCE_NUMBER', failed);
      return 'more';
    }
    // A poison record: park it in the log (the on-failure destination of the AWS mapping) and move on.
    logJson('error', 'stream record failed every retry; skipping it', { shard_id: shardId, sequence_number: failed });
    const record = batch.find((r) => r.dynamodb?.SequenceNumber === failed);
    if (record) await this.mapping.onFailure?.(record);
    shard.failures = 0;
    shard.position.sequenceNumber = failed;
    await this.save();
    shard.iterator = await this.iterator(shardId, 'AFTER_SEQUENCE_NUMBER', failed);
    return 'more';
  }
}
