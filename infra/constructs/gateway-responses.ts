import * as apigw from 'aws-cdk-lib/aws-apigateway';
import { gatewayResponseTable } from '#http/gateway-responses.ts';

const quoted = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, `'${v}'`]));

/**
 * Keeps API Gateway's own errors (before or instead of a Lambda) in the contract's JSON shape,
 * every type with its own status and code (shared/http/gateway-responses.ts, docs/gateway.md).
 */
export function addGatewayResponses(api: apigw.RestApi, rateLimitPerMinute: number): void {
  for (const spec of gatewayResponseTable(rateLimitPerMinute)) {
    api.addGatewayResponse(spec.type, {
      type: apigw.ResponseType.of(spec.type),
      statusCode: String(spec.status),
      templates: { 'application/json': JSON.stringify(spec.body) },
      responseHeaders: quoted({ 'Content-Type': 'application/json', ...spec.headers }),
    });
  }
}
