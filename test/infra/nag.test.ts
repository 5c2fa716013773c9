import { describe, expect, it } from 'vitest';
import { Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { synthStacks } from './synth.ts';

/**
 * cdk-nag 3 runs as a CDK validation plugin: synthesis fails with a report when a finding is
 * not acknowledged. Acknowledgements, each with its reason, live in infra/nag-acknowledgements.ts.
 */
describe('cdk-nag AwsSolutions', () => {
  it('finds nothing unacknowledged in either stack', () => {
    const { app } = synthStacks({ alarmEmail: 'ops@example.com' });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    let report = '';
    try {
      app.synth();
    } catch (err) {
      report = (err as Error).message;
    }
    expect(report).toBe('');
  }, 300_000);
});
