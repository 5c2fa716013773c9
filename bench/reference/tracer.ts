/**
 * Powertools Tracer as functions/webhooks/tracing.ts builds it in Lambda, on the X-Ray SDK as the
 * signer bundles it (infra/xray-sdk.ts), and nothing else, bundled as a Lambda is (`npm run
 * bench`, section bundles): what tracing alone adds to the webhook signer's import.
 */
import { Tracer } from '@aws-lambda-powertools/tracer';

export const tracer = new Tracer({ serviceName: 'bench', captureHTTPsRequests: false });
