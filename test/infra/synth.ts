import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { StatefulStack } from '#infra/stateful-stack.ts';
import { ApiStack, type ApiStackProps } from '#infra/api-stack.ts';

/**
 * An app for templates only: bundling skipped (the assertions are about wiring, not bundles) and
 * CDK's built-in CloudFormation validation off. That validation (a WebAssembly rule engine) took
 * ~5 of each synthesis's CPU-seconds, and in an App its findings are warnings no assertion here
 * reads; test/infra/documented-deploy.test.ts synthesizes as the CLI does, with it, and fails on
 * any finding. cdk-nag, also a validation plugin, still runs wherever a test adds it.
 */
export const templateApp = () =>
  new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });

/** Both stacks, templates only. */
export function synthStacks(props: Partial<Omit<ApiStackProps, 'data'>> = {}) {
  const app = templateApp();
  const stateful = new StatefulStack(app, 'Data', { apiStackName: 'Api' });
  const api = new ApiStack(app, 'Api', { data: stateful, ...props });
  return { app, stateful, api, data: Template.fromStack(stateful), template: Template.fromStack(api) };
}

/** The logical id CloudFormation knows a construct by. */
export const logicalId = (c: { node: { defaultChild?: unknown } }) =>
  Stack.of(c as never).getLogicalId(c.node.defaultChild as never);

type Statement = { Action: string | string[]; Resource: unknown; Condition?: Record<string, unknown> };

/** The statements of the policy attached to a function's role. */
export function statementsOf(template: Template, fn: { role?: { node: { defaultChild?: unknown } } }): Statement[] {
  const roleId = logicalId(fn.role!);
  const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((p) =>
    (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId),
  );
  return policies.flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
}

export const actionsOf = (statements: Statement[], service: string) =>
  [
    ...new Set(
      statements
        .flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]))
        .filter((a) => a.startsWith(`${service}:`)),
    ),
  ].sort();

/**
 * A string CloudFormation builds at deploy time (`Fn::Join` of literals and `Ref`s), spelled with
 * `{LogicalId}` and `{AWS::Region}` where the deploy fills in a value.
 */
export function joined(value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, unknown>;
  if ('Fn::Join' in v) {
    const [sep, parts] = v['Fn::Join'] as [string, unknown[]];
    return parts.map(joined).join(sep);
  }
  if ('Ref' in v) return `{${String(v.Ref)}}`;
  throw new Error(`not a string CloudFormation can build: ${JSON.stringify(value)}`);
}

/** The protected-resource metadata URL every 401 of the synthesized API names. */
export const deployedMetadataUrl = (api: { api: { node: { defaultChild?: unknown } } }) =>
  `https://{${logicalId(api.api)}}.execute-api.{AWS::Region}.{AWS::URLSuffix}/prod/.well-known/oauth-protected-resource/api/v1/integrations`;
