import { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Construct } from 'constructs';
import { NAME_PENDING_STREAM_FILTER } from '#db/name-index/stream.ts';
import { ServiceFunction } from './service-function.ts';

/**
 * filter[name]'s indexer: table stream (pending-name writes only) → trigram postings
 * (shared/db/name-index/repo.ts). One poller per shard (parallelization factor 1), so a product's
 * names are indexed in the order they were written and never by two invocations at once. No
 * on-failure destination: a record given up on leaves its name pending, which every search still
 * reads (correct, only dearer); the function's error alarm says so.
 */
export class NameIndexer extends Construct {
  readonly function: ServiceFunction;

  constructor(scope: Construct, id: string, props: { table: dynamodb.ITable }) {
    super(scope, id);
    this.function = new ServiceFunction(this, 'NameIndexFunction', {
      entryPath: 'functions/name-index/handler.ts',
      service: 'name-index',
      description: 'Table stream → trigram postings of product names (filter[name])',
      timeout: Duration.seconds(60),
    }).bindTable(props.table, 'nameIndex');
    this.function.addEventSource(
      new DynamoEventSource(props.table, {
        startingPosition: lambda.StartingPosition.TRIM_HORIZON,
        batchSize: 1000,
        filters: [lambda.FilterCriteria.filter(NAME_PENDING_STREAM_FILTER)],
        bisectBatchOnError: true,
        retryAttempts: 10,
        reportBatchItemFailures: true,
        parallelizationFactor: 1,
      }),
    );
  }
}
