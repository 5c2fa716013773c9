import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { API_BASE_PATH } from '#http/api-routes.ts';
import { apiRoot, challengeHeaders } from '#http/challenge.ts';
import { createHttpHandler } from '#http/http-handler.ts';
import { gatewayEvent } from '#fixtures/gateway-event.ts';

/**
 * The 401s a handler answers itself name the protected-resource metadata like the gateway's own
 * (docs/oauth.md#endpoints): the request's root, with the stage on an execute-api host.
 */
const event = (headers: Record<string, string>, authorizer?: Record<string, string>) =>
  gatewayEvent(
    { headers },
    {
      domainName: 'abc123.execute-api.eu-west-1.amazonaws.com',
      path: `/prod${API_BASE_PATH}/products`,
      ...(authorizer ? { authorizer } : {}),
    },
  );
const METADATA = `https://abc123.execute-api.eu-west-1.amazonaws.com/prod/.well-known/oauth-protected-resource${API_BASE_PATH}`;
const products = createHttpHandler('products', {
  listProducts: async () => ({ body: {} }),
  getProduct: async () => ({ body: {} }),
});

describe('the challenge of a 401 a handler answers', () => {
  it('is the root with the stage of an execute-api request', () => {
    expect(apiRoot(event({}))).toBe('https://abc123.execute-api.eu-west-1.amazonaws.com/prod');
    expect(challengeHeaders(event({}), false)).toEqual({
      'WWW-Authenticate': `Bearer resource_metadata="${METADATA}"`,
    });
    expect(challengeHeaders(event({}), true)).toEqual({
      'WWW-Authenticate': `Bearer resource_metadata="${METADATA}", error="invalid_token"`,
    });
  });

  it('names the metadata when no authorizer vouched for the request, with invalid_token when a token was sent', async () => {
    const bare = await products(event({}), {} as Context);
    expect(bare.statusCode).toBe(401);
    expect(bare.headers?.['WWW-Authenticate']).toBe(`Bearer resource_metadata="${METADATA}"`);
    const sent = await products(event({ Authorization: 'Bearer sio_whatever' }), {} as Context);
    expect(sent.statusCode).toBe(401);
    expect(sent.headers?.['WWW-Authenticate']).toBe(`Bearer resource_metadata="${METADATA}", error="invalid_token"`);
    expect(JSON.parse(sent.body)).toMatchObject({ code: 'unauthenticated', field: null });
  });
});
