import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import document from '../../docs/openapi.json' with { type: 'json' };
import { API_BASE_PATH } from '#http/api-routes.ts';
import { DEFAULT_SERVER_URL } from '#http/openapi/defaults.ts';

/**
 * GET {base}/openapi.json in AWS: the committed docs/openapi.json (bundled in; a test keeps it
 * current) with the server URL of the request. A Lambda rather than a MOCK integration: the API
 * declares every media type binary, under which a MOCK's mapping template is not applied and
 * API Gateway answers 500. Public (no authorizer), reads nothing; the local gateway serves the
 * same file itself.
 */
const text = JSON.stringify(document);
const ALLOW = 'GET, HEAD';

export async function handler(event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  const method = event.httpMethod.toUpperCase();
  if (method !== 'GET' && method !== 'HEAD') {
    const body = JSON.stringify({
      code: 'method_not_allowed',
      message: `${method} is not allowed here; use GET.`,
      field: null,
    });
    return { statusCode: 405, headers: { 'Content-Type': 'application/json', Allow: ALLOW }, body };
  }
  const { domainName, stage } = event.requestContext;
  const body = text.replaceAll(DEFAULT_SERVER_URL, `https://${domainName}/${stage}${API_BASE_PATH}`);
  const headers = { 'Content-Type': 'application/json', 'Cache-Control': 'public, max-age=300' };
  // HEAD: GET's headers and no body (RFC 9110 §9.3.2).
  return { statusCode: 200, headers, body: method === 'HEAD' ? '' : body };
}
