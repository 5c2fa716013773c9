import { describe, expect, it } from 'vitest';
import { type App, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { acknowledgeMethodNotAllowed, addNagChecks } from '#infra/nag-acknowledgements.ts';
import { templateApp } from './synth.ts';

/** Synthesizes `app` afresh (a new App each time: a second synth() would return the cached assembly). */
function synthReport(app: App): string {
  try {
    app.synth();
    return '';
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * cdk-nag runs inside synthesis (infra/app.ts adds the AwsSolutions and Serverless packs), so
 * `cdk synth` itself fails on a finding that infra/nag-acknowledgements.ts does not acknowledge.
 * That the app passes, with each documented context and with every switch flipped, is
 * test/infra/documented-deploy.test.ts; here, that the checks do fail.
 */
describe('cdk-nag in synthesis', () => {
  it('fails synthesis on a wildcard grant and on a bucket without SSL enforcement', () => {
    const app = templateApp();
    addNagChecks(app);
    const stack = new Stack(app, 'Bad');
    new s3.Bucket(stack, 'Bucket');
    const role = new iam.Role(stack, 'Role', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    role.addToPolicy(new iam.PolicyStatement({ actions: ['s3:*'], resources: ['*'] }));
    const report = synthReport(app);
    expect(report).toContain('AwsSolutions-IAM5');
    expect(report).toContain('AwsSolutions-S10');
    expect(report).toContain('Bad/Role');
  }, 120_000); // the first synthesis of the file loads cdk-nag's rules: slow on a loaded machine

  it('fails on an unauthorized method unless that very method is acknowledged', async () => {
    const apigw = await import('aws-cdk-lib/aws-apigateway');
    const build = (acknowledged: boolean) => {
      const app = templateApp();
      addNagChecks(app);
      const stack = new Stack(app, 'Open');
      const api = new apigw.RestApi(stack, 'Api', { cloudWatchRole: false, deploy: false });
      const method = api.root.addMethod('ANY', new apigw.MockIntegration(), {
        authorizationType: apigw.AuthorizationType.NONE,
      });
      if (acknowledged) acknowledgeMethodNotAllowed(method);
      return synthReport(app);
    };
    expect(build(false)).toContain('AwsSolutions-APIG4');
    expect(build(true)).not.toContain('AwsSolutions-APIG4');
  });
});
