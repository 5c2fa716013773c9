import { describe, expect, it } from 'vitest';
import { evaluateWebAcl, type WebAcl, type WafRequest } from '#emulation/rehearsal/waf.ts';

/**
 * The rehearsal's web ACL evaluation. The body-size rule is the one a template would need for
 * bodies over 1 MiB to get 413 before Lambda's payload limit (docs/rehearsal.md): WAF reads the
 * Content-Length header, whatever the body's encoding on the way to the Lambda.
 */
const OVER_ONE_MIB =
  '^0*([1-9][0-9]{7,}|[2-9][0-9]{6}|1[1-9][0-9]{5}|10[5-9][0-9]{4}|1049[0-9]{3}|1048[6-9][0-9]{2}|10485[89][0-9]|104857[7-9])$';
const acl: WebAcl = {
  name: 'Acl',
  defaultAction: { Allow: {} },
  bodies: { tooLarge: { ContentType: 'APPLICATION_JSON', Content: '{"code":"payload_too_large"}' } },
  rules: [
    {
      name: 'PerIp',
      priority: 0,
      action: { Block: {} },
      statement: { RateBasedStatement: { Limit: 10, AggregateKeyType: 'IP' } },
    },
    {
      name: 'BodyOverOneMiB',
      priority: 1,
      action: {
        Block: {
          CustomResponse: {
            ResponseCode: 413,
            CustomResponseBodyKey: 'tooLarge',
            ResponseHeaders: [{ Name: 'Connection', Value: 'close' }],
          },
        },
      },
      statement: {
        RegexMatchStatement: {
          RegexString: OVER_ONE_MIB,
          FieldToMatch: { SingleHeader: { Name: 'Content-Length' } },
          TextTransformations: [{ Priority: 0, Type: 'NONE' }],
        },
      },
    },
    {
      name: 'NoAdminPath',
      priority: 2,
      action: { Block: {} },
      statement: {
        AndStatement: {
          Statements: [
            {
              ByteMatchStatement: {
                SearchString: '/admin',
                PositionalConstraint: 'STARTS_WITH',
                FieldToMatch: { UriPath: {} },
                TextTransformations: [{ Priority: 0, Type: 'LOWERCASE' }],
              },
            },
            {
              NotStatement: {
                Statement: {
                  ByteMatchStatement: {
                    SearchString: 'GET',
                    PositionalConstraint: 'EXACTLY',
                    FieldToMatch: { Method: {} },
                    TextTransformations: [],
                  },
                },
              },
            },
          ],
        },
      },
    },
  ],
};
const request = (over: Partial<WafRequest>): WafRequest => ({
  method: 'PUT',
  path: '/x',
  query: '',
  headers: {},
  body: Buffer.alloc(0),
  ...over,
});

describe('rehearsal web ACL', () => {
  it('blocks a Content-Length over 1 MiB with the custom 413, and lets 1 MiB exactly through', () => {
    expect(evaluateWebAcl(acl, request({ headers: { 'content-length': '1048576' } }))).toEqual({ action: 'allow' });
    for (const length of ['1048577', '1048580', '1049000', '1100000', '5242880', '10485761', '0001048577']) {
      expect(evaluateWebAcl(acl, request({ headers: { 'content-length': length } })), length).toEqual({
        action: 'block',
        response: {
          status: 413,
          headers: { 'Content-Type': 'application/json', Connection: 'close' },
          body: '{"code":"payload_too_large"}',
        },
      });
    }
    for (const length of ['0', '999999', '1048569', '1048575'])
      expect(evaluateWebAcl(acl, request({ headers: { 'content-length': length } })), length).toEqual({
        action: 'allow',
      });
  });

  it('evaluates and/not/byte-match statements and blocks without a custom response (WAF_FILTERED)', () => {
    expect(evaluateWebAcl(acl, request({ method: 'POST', path: '/ADMIN/x' }))).toEqual({ action: 'block' });
    expect(evaluateWebAcl(acl, request({ method: 'GET', path: '/admin/x' }))).toEqual({ action: 'allow' });
  });

  it('never matches a rate-based rule (not evaluated), so the next rules and the default decide', () => {
    expect(evaluateWebAcl(acl, request({}))).toEqual({ action: 'allow' });
    expect(evaluateWebAcl({ ...acl, rules: [], defaultAction: { Block: {} } }, request({}))).toEqual({
      action: 'block',
    });
  });
});
