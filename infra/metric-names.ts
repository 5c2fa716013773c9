/**
 * Custom metrics the alarms read. The functions emit them as EMF through Powertools Metrics,
 * which takes the namespace from POWERTOOLS_METRICS_NAMESPACE and adds a `service` dimension
 * (POWERTOOLS_SERVICE_NAME), both set by ServiceFunction.
 */
export const METRICS_NAMESPACE = 'StoreIntegrations';

export const WEBHOOK_METRICS = {
  service: 'webhooks',
  /** One count per delivery step, by `outcome` (shared/app/delivery-metrics.ts). */
  deliveries: 'Deliveries',
  /**
   * The outcome of deliveries given up after the whole retry schedule because the receiver kept
   * failing (4xx/5xx/timeouts): a tenant's receiver is down, not a platform fault.
   */
  failedOutcome: 'failed',
  /** One count per endpoint parked (shared/app/endpoint-health.ts), dimension reason. */
  endpointsParked: 'EndpointsParked',
  parkedReason: 'sustained_failures',
} as const;

export const GATEWAY_METRICS = {
  /** Access-log lines whose gateway response type is THROTTLED (a metric filter; infra/constructs/gateway-alarms.ts). */
  stageThrottled: 'StageThrottled',
} as const;
