import * as apigw from 'aws-cdk-lib/aws-apigateway';
import type { Construct } from 'constructs';
import { API_BASE_PATH } from '#http/api-routes.ts';
import { ServiceFunction } from './constructs/service-function.ts';
import { acknowledgeOpenApiMethod } from './nag-acknowledgements.ts';

/**
 * {base}/openapi.json: public (no authorizer), answered by a small function of its own that holds
 * the committed docs/openapi.json (functions/openapi/handler.ts). Not a MOCK integration: the API
 * declares every media type binary, under which API Gateway does not apply a MOCK's mapping
 * templates and answers 500. GET and HEAD serve the document; any other method is a 405 with Allow.
 */
export function addOpenApiMethod(scope: Construct, api: apigw.RestApi): ServiceFunction {
  const fn = new ServiceFunction(scope, 'OpenApiFunction', {
    entryPath: 'functions/openapi/handler.ts',
    service: 'openapi',
    description: 'Serves the OpenAPI document (public)',
    memorySize: 256,
  });
  const resource = api.root.resourceForPath(`${API_BASE_PATH}/openapi.json`);
  const integration = new apigw.LambdaIntegration(fn);
  const methods: [string, string][] = [
    ['GET', 'getOpenApiDocument'],
    ['HEAD', 'getOpenApiDocumentHead'],
    ['ANY', 'methodNotAllowed'],
  ];
  for (const [method, operationName] of methods) {
    acknowledgeOpenApiMethod(
      resource.addMethod(method, integration, { authorizationType: apigw.AuthorizationType.NONE, operationName }),
    );
  }
  return fn;
}
