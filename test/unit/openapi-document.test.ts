import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as v from 'valibot';
import { API_ROUTES } from '#http/api-routes.ts';
import { EVENT_TYPES, isTracked } from '#domain/event/event.ts';
import { WEBHOOK_EVENTS } from '#http/openapi/webhook-events.ts';
import { ERROR_CATALOGUE } from '#http/openapi/error-catalogue.ts';
import { ERROR_CODES } from '#domain/errors.ts';
import { buildOpenApiDocument } from '#http/openapi/document.ts';
import { errorCatalogueMarkdown } from '#http/openapi/error-catalogue-md.ts';
import { ERRORS_FILE, OPENAPI_FILE, renderOpenApi } from '#bin/openapi.ts';
import { SETTABLE_STATUSES } from '#domain/order/status-change.ts';
import { UNAUTHORIZED_MESSAGE } from '#http/gateway-responses.ts';

const doc = buildOpenApiDocument();
type Op = {
  operationId: string;
  'x-required-ability': string | null;
  description: string;
  responses: Record<string, any>;
};
const opOf = (path: string, method: string) =>
  (doc.paths as Record<string, Record<string, Op>>)[path]![method.toLowerCase()]!;

describe('the OpenAPI document', () => {
  it('is committed current at docs/openapi.json, and docs/errors.md too (npm run openapi regenerates both)', () => {
    expect(readFileSync(OPENAPI_FILE, 'utf8'), 'docs/openapi.json is stale: run npm run openapi').toBe(renderOpenApi());
    expect(readFileSync(ERRORS_FILE, 'utf8'), 'docs/errors.md is stale: run npm run openapi').toBe(
      errorCatalogueMarkdown(),
    );
  });

  it('is OpenAPI 3.1 with every route of the table under its operation name and ability', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    for (const route of API_ROUTES) {
      const op = opOf(route.path, route.method);
      expect(op.operationId).toBe(route.operation);
      // A route that any one of several abilities opens (GET /events) names them all.
      const anyOf = (route as { anyOf?: readonly string[] }).anyOf;
      expect(op['x-required-ability']).toEqual(anyOf ?? route.ability);
      for (const ability of anyOf ?? (route.ability ? [route.ability] : [])) expect(op.description).toContain(ability);
    }
    const ids = Object.values(doc.paths).flatMap((item) =>
      Object.values(item as Record<string, Op>).map((o) => o.operationId),
    );
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('gives every operation a 200 with a schema, and every error status only the codes of that status', () => {
    for (const route of API_ROUTES) {
      const { responses } = opOf(route.path, route.method);
      expect(responses['200']?.content?.['application/json']?.schema, route.operation).toBeDefined();
      for (const [status, response] of Object.entries(responses)) {
        const schema = response.content?.['application/json']?.schema;
        const codes: string[] | undefined = schema?.allOf?.[1]?.properties?.code?.enum;
        const where = `${route.operation} ${status}`;
        if (Number(status) < 400) {
          expect(codes, `${where} is a success but lists error codes`).toBeUndefined();
          continue;
        }
        // The MCP endpoint's 400 is a JSON-RPC error object (its own protocol), not the error envelope.
        if (schema?.$ref === '#/components/schemas/JsonRpcResponse') {
          expect(where).toBe('mcp 400');
          continue;
        }
        expect(codes, `${where} lists no error codes`).toEqual(expect.arrayContaining([expect.any(String)]));
        for (const code of codes!)
          expect(
            ERROR_CATALOGUE[code as keyof typeof ERROR_CATALOGUE].status,
            `${route.operation} ${status} ${code}`,
          ).toBe(Number(status));
      }
      expect(responses['401'], route.operation).toBeDefined();
      expect(responses['429']?.headers?.['Retry-After'], route.operation).toBeDefined();
    }
  });

  it('says an API key or an OAuth access token is required, in the words every 401 body carries', () => {
    expect(UNAUTHORIZED_MESSAGE).toMatch(/API key or OAuth access token/);
    for (const route of API_ROUTES) {
      const unauthorized = opOf(route.path, route.method).responses['401'];
      expect(unauthorized.content['application/json'].example, route.operation).toEqual({
        code: 'unauthenticated',
        message: UNAUTHORIZED_MESSAGE,
        field: null,
      });
      expect(unauthorized.description, route.operation).toMatch(/API key or OAuth access token/);
    }
    const schemes = (doc.components as { securitySchemes: Record<string, { description: string }> }).securitySchemes;
    expect(schemes.bearerAuth!.description).toMatch(/OAuth access token/);
    expect(doc.info.description).toMatch(/OAuth access token/);
    expect(errorCatalogueMarkdown()).toMatch(/^\| `unauthenticated` \| 401 \| .*API key or OAuth access token/m);
  });

  it('types the status a client may set as an enum of the settable statuses', () => {
    const body = opOf('/orders/{reference}/status', 'POST') as unknown as {
      requestBody: { content: Record<string, { schema: { properties: Record<string, unknown> } }> };
    };
    expect(body.requestBody.content['application/json']!.schema.properties.status).toEqual({
      type: 'string',
      enum: [...SETTABLE_STATUSES],
    });
    expect(SETTABLE_STATUSES).toHaveLength(6);
  });

  it('lists every error code in docs/errors.md with its status', () => {
    const md = errorCatalogueMarkdown();
    for (const code of ERROR_CODES) expect(md).toContain(`| \`${code}\` | ${ERROR_CATALOGUE[code].status} |`);
  });

  it('describes the webhooks with the Standard Webhooks headers, and the sequence on every logged event', () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES, 'webhook.ping'].sort());
    for (const [type, item] of Object.entries(doc.webhooks)) {
      const names = (item.post.parameters as { name: string }[]).map((p) => p.name);
      const signed = ['webhook-id', 'webhook-timestamp', 'webhook-signature'];
      expect(names).toEqual(type === 'webhook.ping' ? signed : [...signed, 'webhook-sequence']);
    }
  });

  it.each(EVENT_TYPES.map((t) => [t]))(
    'has a webhooks entry for %s whose body is the delivery body (the GET /events item)',
    (type) => {
      const body = doc.webhooks[type]?.post.requestBody.content['application/json'].schema as any;
      expect(body).toMatchObject({
        type: 'object',
        additionalProperties: false,
        required: [
          'id',
          'sequence',
          'type',
          'timestamp',
          'origin',
          ...(isTracked(type) ? ['changed_fields'] : []),
          'data',
        ],
        properties: { type: { const: type }, sequence: { type: 'integer', minimum: 1 } },
      });
      const family = type.split('.')[0];
      expect(body.properties.data.required).toContain(family);
      expect(doc.webhooks[type]?.post.operationId).toBe(`webhook_${type.replace('.', '_')}`);
    },
  );

  it('gives webhook examples that are valid bodies of their event', () => {
    const examples = Object.entries(doc.webhooks).flatMap(([type, item]) => {
      const example = item.post.requestBody.content['application/json'].example;
      return example === undefined ? [] : [[type, example] as const];
    });
    expect(examples.map(([type]) => type)).toEqual(expect.arrayContaining(['order.status_changed', 'product.updated']));
    for (const [type, example] of examples) {
      const checked = v.safeParse(WEBHOOK_EVENTS[type as keyof typeof WEBHOOK_EVENTS].body, example);
      expect(checked.success, `${type}: ${JSON.stringify(checked.issues?.map((i) => i.message))}`).toBe(true);
    }
  });
});
