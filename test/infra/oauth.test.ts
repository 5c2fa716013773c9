import { describe, expect, it } from 'vitest';
import { keys } from '#db/keys.ts';
import { OAUTH_ROUTES } from '#http/api-routes.ts';
import { statementsOf, synthStacks } from './synth.ts';

describe('OAuth endpoints in the API stack', () => {
  const { api, template } = synthStacks();

  it('has the well-known documents and the OAuth endpoints, public, on the OAuth function', () => {
    const resources = Object.values(template.findResources('AWS::ApiGateway::Resource')).map(
      (r) => r.Properties.PathPart as string,
    );
    for (const part of ['.well-known', 'oauth-protected-resource', 'oauth-authorization-server', 'oauth', 'token'])
      expect(resources).toContain(part);
    const methods = Object.values(template.findResources('AWS::ApiGateway::Method')).filter((m) =>
      OAUTH_ROUTES.some((r) => r.operation === m.Properties.OperationName),
    );
    expect(methods).toHaveLength(OAUTH_ROUTES.length);
    for (const m of methods) expect(m.Properties.AuthorizationType).toBe('NONE');
  });

  it('limits the OAuth function to its own items and the grant keys, token items and stores', () => {
    const [statement, ...rest] = statementsOf(template, api.oauthFunction).filter((s) =>
      JSON.stringify(s.Action).includes('dynamodb:'),
    );
    expect(rest).toHaveLength(0);
    expect(statement!.Action).not.toContain('dynamodb:Query');
    const leading = (statement!.Condition as Record<string, Record<string, string[]>>)['ForAllValues:StringLike']![
      'dynamodb:LeadingKeys'
    ];
    expect(leading).toEqual([
      'OAUTH_CLIENT#*',
      'OAUTH_REQUEST#*',
      'OAUTH_CODE#*',
      'OAUTH_REFRESH#*',
      'OAUTH_LIMIT#*',
      'KEY#*',
      'TOKEN#*',
      'STORE#*',
    ]);
    expect(keys.oauthCode('x').pk).toMatch(/^OAUTH_CODE#/);
  });
});
