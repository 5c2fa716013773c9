import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

/**
 * CloudWatch metrics as Embedded Metric Format lines on stdout (Powertools' Metrics): CloudWatch
 * Logs turns them into metrics, no PutMetricData call and no permission needed. One EMF line per
 * event (a request, a delivery attempt), from a Metrics object of its own, so that the local
 * gateway's concurrent requests never mix dimensions.
 *
 * Namespace: POWERTOOLS_METRICS_NAMESPACE (default StoreIntegrationApi); the `service` dimension:
 * POWERTOOLS_SERVICE_NAME. The local stack turns them off (its console log is for people).
 */
export { MetricUnit };
export type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

const DEFAULT_METRICS_NAMESPACE = 'StoreIntegrationApi';
let enabled = true;

export function setMetricsEnabled(on: boolean): void {
  enabled = on;
}

function metricsOf(
  dimensions: Record<string, string>,
  values: ReadonlyArray<readonly [name: string, unit: Unit, value: number]>,
): Metrics {
  const metrics = new Metrics({
    namespace: process.env.POWERTOOLS_METRICS_NAMESPACE || DEFAULT_METRICS_NAMESPACE,
    serviceName: process.env.POWERTOOLS_SERVICE_NAME || 'store-integration-api',
  });
  for (const [name, value] of Object.entries(dimensions)) metrics.addDimension(name, value);
  for (const [name, unit, value] of values) metrics.addMetric(name, unit, value);
  return metrics;
}

export function emitMetrics(
  dimensions: Record<string, string>,
  values: ReadonlyArray<readonly [name: string, unit: Unit, value: number]>,
): void {
  if (!enabled || values.length === 0) return;
  metricsOf(dimensions, values).publishStoredMetrics();
}

/**
 * The same metrics as fields to put on a log line of one's own (`_aws`, the dimensions and the
 * values at its top level, as EMF reads them), so that a request costs one line, not two; none
 * when metrics are off. The line's `service` must be the metrics' service (both take
 * POWERTOOLS_SERVICE_NAME).
 */
export function metricFields(
  dimensions: Record<string, string>,
  values: ReadonlyArray<readonly [name: string, unit: Unit, value: number]>,
): Record<string, unknown> | undefined {
  if (!enabled || values.length === 0) return undefined;
  // `service` the line has already (Powertools' Logger keeps it for itself).
  const { service: _service, ...fields } = metricsOf(dimensions, values).serializeMetrics() as unknown as Record<
    string,
    unknown
  >;
  return fields;
}
