import type { Tracer } from '@aws-lambda-powertools/tracer';
import { isRequestXRaySampled } from '@aws-lambda-powertools/commons/utils/env';
import { onAwsClient } from '#shared/aws-clients.ts';
import { errorFields, log } from '#shared/log.ts';

/**
 * X-Ray spans for the webhook signer, by Powertools Tracer: every DynamoDB, SQS, KMS, SNS, STS
 * and EventBridge call it makes (each client handed to `captureAWSv3Client` as it is built,
 * shared/aws-clients.ts) and one subsegment per attempt (a webhook POST, or a send to the
 * integrator's queue or bus), so a slow delivery shows whether the receiver or the platform took
 * the time.
 *
 * Only the signer carries Tracer: it adds the X-Ray SDK (~125 KB minified) to a bundle, and the
 * API functions keep their cold start at the floor (docs/observability.md#traces says what they
 * trace instead). The bundled SDK loads its AWS SDK v2 and HTTP patchers only if one is called
 * (infra/xray-sdk.ts). Outgoing HTTP is not patched (`captureHTTPsRequests: false`): the patch would
 * add an `X-Amzn-Trace-Id` header to every POST, handing our trace ids to the tenant's receiver.
 */

/**
 * Whether Tracer would trace here, by its own rule (a Lambda execution environment, not SAM's or
 * Amplify's emulation, POWERTOOLS_TRACE_ENABLED not "false"). Anywhere else the X-Ray SDK is not
 * even loaded: it installs async hooks (cls-hooked) as it loads, which track every promise of the
 * process (measured: 300,000 awaited promises 86 ms without it, 1,717 ms with it), and the local
 * stack, the tests and the bench run the signer inside the process that serves the API.
 */
export function tracingWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  const execution = env.AWS_EXECUTION_ENV ?? '';
  return (
    execution !== '' &&
    execution !== 'AWS_Lambda_amplify-mock' &&
    (env.AWS_SAM_LOCAL ?? '') === '' &&
    (env.POWERTOOLS_TRACE_ENABLED ?? '').toLowerCase() !== 'false'
  );
}

const wanted = tracingWanted();
let tracer: Tracer | undefined;
let loading: Promise<void> | undefined;

/**
 * Called as each invocation starts: loads Tracer at the first one that X-Ray samples, and from
 * then on it traces every sampled invocation of the container. An unsampled invocation would send
 * nothing, so the cold start no longer pays for the X-Ray SDK: a container pays the load (~19 ms,
 * the bench's "Tracer alone") once, on its first sampled invocation. With the default rule (one
 * request a second, then 5%) a busy container meets one within its first few dozen invocations,
 * so this moves the cost off the cold start rather than saving it; a container that meets no
 * sampled invocation never pays it. The decision is Lambda's, read where Powertools reads it
 * (the invocation's store, else `_X_AMZN_TRACE_ID`). Clients built before the load are captured
 * as it happens (shared/aws-clients.ts), so the invocation's DynamoDB and SQS calls are traced.
 * A load that fails is logged and leaves the signer untraced: tracing never holds up a delivery.
 */
export function startTracing(): Promise<void> | undefined {
  if (tracer || !wanted || !isRequestXRaySampled()) return undefined;
  loading ??= import('@aws-lambda-powertools/tracer').then(
    ({ Tracer }) => {
      const loaded = new Tracer({
        serviceName: process.env.POWERTOOLS_SERVICE_NAME || 'store-integration-api',
        captureHTTPsRequests: false,
      });
      onAwsClient((client) => loaded.captureAWSv3Client(client));
      tracer = loaded;
      log('debug', 'X-Ray tracer loaded at the first sampled invocation');
    },
    (err: unknown) => log('error', 'could not load the X-Ray tracer; the signer runs untraced', errorFields(err)),
  );
  return loading;
}

/** What an attempt's span records: the target's short name (a receiver's host, never its path or query, which may hold a secret). */
export interface PostSpan {
  host: string;
  eventType: string;
  attempt: number;
}

/**
 * Runs one attempt (a webhook POST, or a send to a queue or bus) inside its own subsegment (named
 * `webhook POST` for all three), annotated with the target, the event type, the attempt and the
 * answer's status (or the error that prevented one). An attempt that got no 2xx marks the span as
 * an error (the receiver's), not a fault (ours).
 */
export async function tracePost<T extends { status: number | null; error: string | null }>(
  span: PostSpan,
  post: () => Promise<T>,
): Promise<T> {
  const parent = tracer?.isTracingEnabled() ? tracer.getSegment() : undefined;
  if (!parent) return post();
  const sub = parent.addNewSubsegment('webhook POST');
  sub.namespace = 'remote';
  sub.addAnnotation('webhook_host', span.host);
  sub.addAnnotation('event_type', span.eventType);
  sub.addAnnotation('attempt', span.attempt);
  try {
    const result = await post();
    if (result.status !== null) sub.addAnnotation('status', result.status);
    if (result.error !== null) {
      sub.addMetadata('error', result.error);
      sub.addErrorFlag();
    }
    return result;
  } catch (err) {
    sub.addError(err as Error);
    throw err;
  } finally {
    sub.close();
  }
}
