import { App } from 'aws-cdk-lib';
import { StatefulStack } from '../infra/stateful-stack.ts';
import { ApiStack } from '../infra/api-stack.ts';

/** CDK app: the stateful stack (table) and the API stack; nothing else lives here. */
const app = new App();
const env = { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION };
const stateful = new StatefulStack(app, 'IntegrationsData', { env });
new ApiStack(app, 'IntegrationsApi', {
  env,
  table: stateful.table,
  authorizerCacheSeconds: Number(app.node.tryGetContext('authorizerCacheSeconds') ?? 0),
  rateLimitPerMinute: Number(app.node.tryGetContext('rateLimitPerMinute') ?? 60),
});
