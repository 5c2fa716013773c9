import { Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';

export interface AlarmTopicProps {
  /** Address that receives every alarm and its recovery (context `alarmEmail`); none: subscribe yourself. */
  email?: string;
}

/**
 * The SNS topic every alarm of the stack notifies. `connectAlarms()` runs last and gives every
 * CloudWatch alarm in the stack the topic as its alarm and OK action, so no alarm can be added
 * that reaches nobody. The e-mail subscription must be confirmed from the message AWS sends.
 */
export class AlarmTopic extends Construct {
  readonly topic: sns.Topic;

  constructor(scope: Construct, id: string, props: AlarmTopicProps) {
    super(scope, id);
    this.topic = new sns.Topic(this, 'Topic', { displayName: 'Store integration API alarms', enforceSSL: true });
    if (props.email) this.topic.addSubscription(new EmailSubscription(props.email));
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
