import { RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';
import { TABLE } from '#db/core/table.ts';
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE } from '#shared/config.ts';
import { WebhookQueues } from './constructs/webhook-queues.ts';
import { webhookSecretsKeyPolicy } from './key-policy.ts';

export interface StatefulStackProps extends StackProps {
  /** Seconds between webhook attempts; the queue's receive limit follows from it. */
  retrySchedule?: readonly number[];
  /** The stack whose roles may use the webhook secrets key (infra/key-policy.ts); IntegrationsApi by default. */
  apiStackName?: string;
}

/** What the API stack needs from this one. */
export interface StatefulResources {
  table: dynamodb.ITable;
  queues: WebhookQueues;
  webhookSecretsKey: kms.IKey;
  /** The stack name the key policy admits roles of; the API stack must have it. */
  webhookSecretsKeyUsers: string;
}

/**
 * What holds data, kept apart so the stateless stack can be replaced freely: the single table
 * (stream for the outbox, TTL, point-in-time recovery, deletion protection), the webhook queues
 * (pending retries live there) and the KMS key that webhook secrets are encrypted under. All
 * are retained when the stack is deleted: a deleted key would make every stored secret unreadable.
 */
export class StatefulStack extends Stack implements StatefulResources {
  readonly table: dynamodb.Table;
  readonly queues: WebhookQueues;
  readonly webhookSecretsKey: kms.Key;
  readonly webhookSecretsKeyUsers: string;

  constructor(scope: Construct, id: string, props: StatefulStackProps = {}) {
    super(scope, id, props);
    this.webhookSecretsKeyUsers = props.apiStackName ?? 'IntegrationsApi';
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: TABLE.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: TABLE.sortKey, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: TABLE.ttlAttribute,
      stream: dynamodb.StreamViewType.NEW_IMAGE,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // Limited to what the gsi1 queries read (shared/db/core/table.ts). Changing it replaces the index.
    this.table.addGlobalSecondaryIndex({
      indexName: TABLE.gsi1.indexName,
      partitionKey: { name: TABLE.gsi1.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: TABLE.gsi1.sortKey, type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.INCLUDE,
      nonKeyAttributes: [...TABLE.gsi1.projectedAttributes],
    });

    this.queues = new WebhookQueues(this, 'Webhooks', {
      retrySchedule: props.retrySchedule ?? DEFAULT_WEBHOOK_RETRY_SCHEDULE,
    });

    this.webhookSecretsKey = new kms.Key(this, 'WebhookSecretsKey', {
      description: 'Encrypts webhook signing secrets at rest (admin encrypts, signer decrypts)',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
      // Replaces the default policy (account root kms:*), see infra/key-policy.ts.
      policy: webhookSecretsKeyPolicy(this, this.webhookSecretsKeyUsers),
    });
  }
}
