import { readFileSync } from 'node:fs';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import { API_BASE_PATH } from '../shared/http/api-routes.ts';
import { DEFAULT_SERVER_URL } from '../shared/http/openapi/defaults.ts';

/**
 * GET {base}/openapi.json: public (no authorizer), answered by API Gateway itself from the
 * committed docs/openapi.json (a test keeps it current) — no Lambda. The document sits in the
 * template as unparsed Velocity text (`#[[...]]#`, so `$ref` and `#/` stay literal); only the
 * server URL is filled in from the request context.
 */
export function addOpenApiMethod(api: apigw.RestApi): void {
  const document = JSON.stringify(JSON.parse(readFileSync(new URL('../docs/openapi.json', import.meta.url), 'utf8')));
  const serverUrl = `]]#https://$context.domainName/$context.stage${API_BASE_PATH}#[[`;
  const template = `#[[${document.replaceAll(DEFAULT_SERVER_URL, serverUrl)}]]#`;
  api.root.resourceForPath(`${API_BASE_PATH}/openapi.json`).addMethod(
    'GET',
    new apigw.MockIntegration({
      requestTemplates: { 'application/json': '{"statusCode": 200}' },
      integrationResponses: [{ statusCode: '200', responseTemplates: { 'application/json': template } }],
    }),
    { authorizationType: apigw.AuthorizationType.NONE, operationName: 'getOpenApiDocument', methodResponses: [{ statusCode: '200' }] },
  );
}
