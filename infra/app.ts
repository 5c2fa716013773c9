import type { App } from 'aws-cdk-lib';
import { StatefulStack } from './stateful-stack.ts';
import { ApiStack } from './api-stack.ts';
import { settingsFromContext } from './settings.ts';

/** The stateful stack (table, queues, key) and the API stack; settings come from context. */
export function defineStacks(app: App): { data: StatefulStack; api: ApiStack } {
  const settings = settingsFromContext(app.node);
  const env = { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION };
  const data = new StatefulStack(app, 'IntegrationsData', { env });
  const api = new ApiStack(app, 'IntegrationsApi', { env, data, ...settings });
  return { data, api };
}
