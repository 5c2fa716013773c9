import * as apigw from 'aws-cdk-lib/aws-apigateway';
import { gatewayResponseTable } from '#http/gateway-responses.ts';

const quoted = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, `'${v}'`]));

/**
 * Keeps API Gateway's own errors (before or instead of a Lambda) in the contract's JSON shape,
 * every type with its own status and code (shared/http/gateway-responses.ts, docs/gateway.md).
 * `metadataUrl` (the protected-resource metadata every 401 names) is a CloudFormation token: a
 * header's literal value may be built with Fn::Join, it only cannot vary by request.
 */
export function addGatewayResponses(api: apigw.RestApi, rateLimitPerMinute: number, metadataUrl: string): void {
  for (const spec of gatewayResponseTable(rateLimitPerMinute, metadataUrl)) {
    api.addGatewayResponse(spec.type, {
      type: apigw.ResponseType.of(spec.type),
      statusCode: String(spec.status),
      templates: { 'application/json': JSON.stringify(spec.body) },
      responseHeaders: quoted({ 'Content-Type': 'application/json', ...spec.headers }),
    });
  }
}
