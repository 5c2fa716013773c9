import { App } from 'aws-cdk-lib';
import { defineStacks } from '#infra/app.ts';

/** CDK app: `npx cdk synth` / `npx cdk deploy --all`. */
defineStacks(new App());
