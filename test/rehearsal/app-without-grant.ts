/**
 * Test-only CDK app: bin/app.ts's stacks with one grant taken away, to prove the rehearsal's IAM
 * check bites. Context `rehearsal:dropGrant` = `<construct path part>=<action>`: that action is
 * removed from every IAM policy under a construct whose path contains the part (for example
 * `CatalogFunction=dynamodb:PutItem`). Production code paths never read this context.
 */
import { App, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { defineStacks } from '#infra/app.ts';

const app = new App();
defineStacks(app);

const [pathPart, action] = String(app.node.tryGetContext('rehearsal:dropGrant') ?? '').split('=');
if (!pathPart || !action) throw new Error('set -c rehearsal:dropGrant=<construct path part>=<action>');
let dropped = 0;
for (const policy of app.node
  .findAll()
  .filter((c): c is iam.CfnPolicy => c instanceof iam.CfnPolicy && c.node.path.includes(pathPart))) {
  // Read to find the statements; override only their Action lists, so that the references in
  // the rest of the document are still rendered by CDK (cross-stack imports included).
  const document = Stack.of(policy).resolve(policy.policyDocument) as { Statement: { Action: string | string[] }[] };
  document.Statement.forEach((statement, index) => {
    const actions = [statement.Action].flat();
    if (!actions.includes(action)) return;
    dropped++;
    const rest = actions.filter((a) => a !== action);
    policy.addPropertyOverride(`PolicyDocument.Statement.${index}.Action`, rest.length ? rest : ['none:Null']);
  });
}
if (dropped === 0) throw new Error(`no policy under "${pathPart}" grants ${action}`);
