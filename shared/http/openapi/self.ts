import { errorResponses } from './error-responses.ts';

/** GET /openapi.json: the document describes where it is served (public, no key). */
export const OPENAPI_DOCUMENT_PATH = '/openapi.json';

export function openApiPathItem() {
  return {
    get: {
      operationId: 'getOpenApiDocument',
      summary: 'This OpenAPI document',
      description:
        'The OpenAPI 3.1 document of this API. Public: no key needed. A rendered reference is at `/docs` on the local stack.',
      tags: ['meta'],
      security: [],
      'x-required-ability': null,
      responses: {
        '200': {
          description: 'The document.',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: { openapi: { type: 'string' }, info: { type: 'object' }, paths: { type: 'object' } },
                required: ['openapi', 'info', 'paths'],
              },
            },
          },
        },
        // API Gateway's account-level throttle applies to public methods too.
        ...errorResponses(['rate_limited']),
      },
    },
  };
}
