import type { App } from 'aws-cdk-lib';
import { StatefulStack } from './stateful-stack.ts';
import { ApiStack } from './api-stack.ts';
import { settingsFromContext } from './settings.ts';
import { addNagChecks } from './nag-acknowledgements.ts';

/** The stateful stack (table, queues, key) and the API stack, checked by cdk-nag; settings come from context. */
export function defineStacks(app: App): { data: StatefulStack; api: ApiStack } {
  addNagChecks(app);
  const settings = settingsFromContext(app.node);
  const env = { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION };
  const data = new StatefulStack(app, 'IntegrationsData', { env, apiStackName: 'IntegrationsApi' });
  const api = new ApiStack(app, 'IntegrationsApi', { env, data, ...settings });
  return { data, api };
}
