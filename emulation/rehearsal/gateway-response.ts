/**
 * API Gateway's own answers as a REST API renders them from its `GatewayResponse`s. A type with an
 * entry of its own uses that entry (its status, or the type's default status when the entry sets
 * none). A type without one inherits `DEFAULT_4XX` or `DEFAULT_5XX` by the family of its default
 * status: their templates and headers, and their StatusCode when set ("changing the status code of
 * this fallback changes the status code of all other 4XX responses"). Without any entry, API
 * Gateway's built-in `{"message": ...}`.
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html
 */
import type { ApiModel } from './api-model.ts';

/** Each response type's default status, from the table of the page above. */
export const DEFAULT_STATUS: Readonly<Record<string, number>> = {
  ACCESS_DENIED: 403,
  API_CONFIGURATION_ERROR: 500,
  AUTHORIZER_CONFIGURATION_ERROR: 500,
  AUTHORIZER_FAILURE: 500,
  BAD_REQUEST_PARAMETERS: 400,
  BAD_REQUEST_BODY: 400,
  EXPIRED_TOKEN: 403,
  INTEGRATION_FAILURE: 504,
  INTEGRATION_TIMEOUT: 504,
  INVALID_API_KEY: 403,
  INVALID_SIGNATURE: 403,
  MISSING_AUTHENTICATION_TOKEN: 403,
  QUOTA_EXCEEDED: 429,
  REQUEST_TOO_LARGE: 413,
  RESOURCE_NOT_FOUND: 404,
  THROTTLED: 429,
  UNAUTHORIZED: 401,
  UNSUPPORTED_MEDIA_TYPE: 415,
  WAF_FILTERED: 403,
};

/** `$context.error.message` of each type, as API Gateway words it. */
const MESSAGE: Readonly<Record<string, string>> = {
  ACCESS_DENIED: 'User is not authorized to access this resource with an explicit deny',
  MISSING_AUTHENTICATION_TOKEN: 'Missing Authentication Token',
  REQUEST_TOO_LARGE: 'Request Too Long',
  THROTTLED: 'Too Many Requests',
  UNAUTHORIZED: 'Unauthorized',
  INTEGRATION_TIMEOUT: 'Endpoint request timed out',
  UNSUPPORTED_MEDIA_TYPE: 'Unsupported Media Type',
};

export interface RenderedResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * The answer for `type`. `status` stands for a situation whose status is not the type's table
 * value (a Lambda that failed is an INTEGRATION_FAILURE with 502, a refused invocation one with
 * 500: ./gateway.ts), and gives way to a StatusCode the template sets, as the table's would.
 */
export function renderGatewayResponse(
  model: Pick<ApiModel, 'responses'>,
  type: string,
  context: { authorizer?: Record<string, unknown>; requestId: string },
  status?: number,
): RenderedResponse {
  const ownStatus = status ?? DEFAULT_STATUS[type] ?? 500;
  const family = ownStatus >= 500 ? 'DEFAULT_5XX' : 'DEFAULT_4XX';
  const own = model.responses.get(type);
  const fallback = model.responses.get(family);
  const entry = own ?? fallback;
  const message = MESSAGE[type] ?? (ownStatus >= 500 ? 'Internal server error' : 'Bad Request');
  const template = entry?.template ?? '{"message":$context.error.messageString}';
  const body = template
    .replaceAll('$context.error.messageString', JSON.stringify(message))
    .replaceAll('$context.error.message', message)
    .replaceAll('$context.error.responseType', type)
    .replaceAll('$context.requestId', context.requestId)
    .replace(/\$context\.authorizer\.(\w+)/g, (_m, key: string) => String(context.authorizer?.[key] ?? ''));
  return {
    status: own ? (own.statusCode ?? ownStatus) : (fallback?.statusCode ?? ownStatus),
    headers: { 'Content-Type': 'application/json', ...(entry?.headers ?? {}) },
    body,
  };
}
