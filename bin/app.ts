import { App } from 'aws-cdk-lib';
import { StatefulStack } from '../infra/stateful-stack.ts';
import { ApiStack } from '../infra/api-stack.ts';
import { settingsFromContext } from '../infra/settings.ts';

/** CDK app: the stateful stack (table, queues, key) and the API stack; settings come from context. */
const app = new App();
const settings = settingsFromContext(app.node);
const env = { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION };
const data = new StatefulStack(app, 'IntegrationsData', { env });
new ApiStack(app, 'IntegrationsApi', { env, data, ...settings });
