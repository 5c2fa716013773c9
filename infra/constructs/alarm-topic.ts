import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { acknowledgeAlarmDeadLetterQueue } from '../nag-acknowledgements.ts';

export interface AlarmTopicProps {
  /** Address that receives every alarm and its recovery (context `alarmEmail`); none: subscribe yourself. */
  email?: string;
}

/**
 * The SNS topic every alarm of the stack notifies. `connectAlarms()` runs last and gives every
 * CloudWatch alarm in the stack the topic as its alarm and OK action, so no alarm can be added
 * that reaches nobody. The e-mail subscription must be confirmed from the message AWS sends.
 *
 * SNS retries an e-mail for about 6 hours and then drops it, unless the subscription has a
 * dead-letter queue: there the notification waits 14 days (encrypted with an SQS-managed key, as
 * the webhook queues are; SNS may send to such a queue, which a customer KMS key would not allow
 * without a key policy for it), and a new message in it raises an alarm of its own, as a rate,
 * like the webhook dead letters, so it does not stay red for the queue's retention.
 */
export class AlarmTopic extends Construct {
  readonly topic: sns.Topic;
  /** Notifications SNS could not deliver to the e-mail address; only with an address. */
  readonly deadLetterQueue: sqs.Queue | undefined;

  constructor(scope: Construct, id: string, props: AlarmTopicProps) {
    super(scope, id);
    this.topic = new sns.Topic(this, 'Topic', { displayName: 'Store integration API alarms', enforceSSL: true });
    if (!props.email) return;
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', {
      retentionPeriod: Duration.days(14),
      enforceSSL: true,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
    });
    acknowledgeAlarmDeadLetterQueue(this.deadLetterQueue);
    // Also grants SNS (for this topic only) sqs:SendMessage in the queue's policy.
    this.topic.addSubscription(new EmailSubscription(props.email, { deadLetterQueue: this.deadLetterQueue }));
    new cloudwatch.Alarm(this, 'UndeliveredNotifications', {
      alarmDescription:
        'Platform: an alarm notification could not be e-mailed (SNS gave up retrying); it waits 14 days in the alarm dead-letter queue',
      metric: this.deadLetterQueue.metricNumberOfMessagesSent({ period: Duration.minutes(5), statistic: 'Sum' }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  connectAlarms(): cloudwatch.Alarm[] {
    const alarms = Stack.of(this)
      .node.findAll()
      .filter((c): c is cloudwatch.Alarm => c instanceof cloudwatch.Alarm);
    const action = new SnsAction(this.topic);
    for (const alarm of alarms) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
    return alarms;
  }
}
