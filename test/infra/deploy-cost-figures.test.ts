import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { synthStacks } from './synth.ts';

/**
 * docs/deploy.md's idle cost counts the alarms of the synthesized stacks and the metrics they
 * read; a figure about the stack comes from the stack, so a change that adds an alarm fails here
 * until the sentence says the new count (issue 61: the sentence had drifted before).
 */
type Alarm = { Properties: { MetricName?: string; Metrics?: { MetricStat?: unknown }[] } };

/** Alarms and the metrics CloudWatch bills them for: one each, or each metric a math alarm reads. */
function alarmsAndMetrics(alarmEmail?: string): { alarms: number; metrics: number } {
  const { template, data } = synthStacks(alarmEmail ? { alarmEmail } : {});
  const alarms = [template, data].flatMap((t) => Object.values(t.findResources('AWS::CloudWatch::Alarm')) as Alarm[]);
  const metrics = alarms.reduce(
    (n, a) => n + (a.Properties.MetricName ? 1 : (a.Properties.Metrics ?? []).filter((m) => m.MetricStat).length),
    0,
  );
  return { alarms: alarms.length, metrics };
}

const deployMd = readFileSync(path.resolve(import.meta.dirname, '../../docs/deploy.md'), 'utf8');

describe('docs/deploy.md, "Cost"', () => {
  const sentence =
    /(\d+) alarms over (\d+) metrics × \$0\.10 = \$(\d+\.\d\d) \((\d+) over (\d+) with `alarmEmail`/.exec(deployMd);

  it('states the alarm and metric counts of the synthesized stacks, without and with alarmEmail', () => {
    expect(
      sentence,
      'the idle cost sentence: "N alarms over M metrics × $0.10 = $X (N over M with `alarmEmail`"',
    ).not.toBeNull();
    const [, alarms, metrics, , emailAlarms, emailMetrics] = sentence!.map(Number);
    expect({ alarms, metrics }, 'docs/deploy.md, without alarmEmail').toEqual(alarmsAndMetrics());
    expect({ alarms: emailAlarms, metrics: emailMetrics }, 'docs/deploy.md, with alarmEmail').toEqual(
      alarmsAndMetrics('ops@example.com'),
    );
  }, 120_000); // two syntheses; slow on a loaded machine

  it('prices the metrics it states at $0.10 each', () => {
    const [, , metrics, dollars] = sentence!;
    expect(dollars).toBe((Number(metrics) * 0.1).toFixed(2));
  });
});
