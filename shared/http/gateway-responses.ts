/**
 * Bodies of the answers API Gateway gives itself (before or instead of a Lambda). The CDK stack
 * renders them as gateway responses and the local gateway sends them, so both say the same.
 */
export const GATEWAY_RESPONSES = {
  unauthorized: { code: 'unauthenticated', message: 'A valid API key is required (Authorization: Bearer <key>).', field: null },
  notFound: { code: 'not_found', message: 'No such endpoint.', field: null },
  tooLarge: { code: 'payload_too_large', message: 'The request body is larger than the API accepts.', field: null },
  throttled: { code: 'rate_limited', message: 'Too many requests; retry later.', field: null },
  badRequest: { code: 'bad_request', message: 'The request could not be processed.', field: null },
  forbidden: (ability: string) => ({ code: 'forbidden', message: `This key lacks the ability ${ability}.`, field: null }),
  internal: { code: 'internal_error', message: 'Something went wrong on our side.', field: null },
};
