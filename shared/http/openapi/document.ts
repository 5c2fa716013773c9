/**
 * The OpenAPI 3.1 document of the API, generated: paths from the route table, parameters and
 * bodies from the valibot schemas the handlers validate with, answers from the response shapes,
 * error answers from the code → status table, webhooks from the event table. `npm run openapi`
 * writes it to docs/openapi.json; the local gateway serves it at {base}/openapi.json.
 */
import { canDryRun } from '../dry-run.ts';
import { DRY_RUN_BODIES, dryRunParameter, withDryRun } from './dry-run.ts';
import type * as v from 'valibot';
import { API_ROUTES, type ApiRoute } from '../api-routes.ts';
import { IDEMPOTENCY_HEADER } from '#domain/idempotency.ts';
import { OPERATION_DOCS, PATH_PARAMETERS, type OperationDoc } from './operations.ts';
import { RESPONSE_BODIES } from './resources.ts';
import { componentSchemas, inputSchema, outputSchema, querySchema, type JsonSchema } from './json-schema.ts';
import { errorCodesOf, errorResponses, replayableHeaderRefs, responseHeaderRefs } from './error-responses.ts';
import { COMPONENT_HEADERS, SECURITY_SCHEMES, INFO, TAGS } from './meta.ts';
import { webhooksSection } from './webhooks.ts';
import { requestExample, responseExample } from './examples.ts';
import { OPENAPI_DOCUMENT_PATH, openApiPathItem } from './self.ts';
import { DEFAULT_SERVER_URL } from './defaults.ts';

export interface OpenApiOptions {
  /** The API's base URL (servers[0].url). */
  serverUrl: string;
}

export { DEFAULT_SERVER_URL };

export function buildOpenApiDocument(options: OpenApiOptions = { serverUrl: DEFAULT_SERVER_URL }) {
  const paths: Record<string, Record<string, object>> = {};
  for (const route of API_ROUTES as readonly ApiRoute[]) {
    const doc = OPERATION_DOCS[route.operation as keyof typeof OPERATION_DOCS];
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operationObject(route, doc);
  }
  paths[OPENAPI_DOCUMENT_PATH] = openApiPathItem();
  const responseBodies = Object.fromEntries(
    Object.entries({ ...RESPONSE_BODIES, ...DRY_RUN_BODIES }).map(([name, schema]) => [name, outputSchema(schema)]),
  );
  return {
    openapi: '3.1.1',
    info: INFO,
    servers: [{ url: options.serverUrl, description: 'This API (the local stack by default: npm start)' }],
    security: [{ bearerAuth: [] }],
    tags: TAGS,
    paths,
    webhooks: webhooksSection(),
    components: {
      schemas: { ...componentSchemas(), ...responseBodies, ...inlineNamedBodies() },
      securitySchemes: SECURITY_SCHEMES,
      headers: COMPONENT_HEADERS,
      parameters: {
        IdempotencyKey: {
          name: IDEMPOTENCY_HEADER,
          in: 'header',
          required: true,
          description:
            'A unique value per intended change (e.g. a UUID). A retry with the same key and body returns the first answer instead of acting twice; the same key with another body is refused (422 idempotency_key_reused).',
          schema: { type: 'string', minLength: 1, maxLength: 255 },
        },
        IfMatch: {
          name: 'If-Match',
          in: 'header',
          required: false,
          description:
            'Write only if the record is still this version: an ETag a read or write answered (or `*`: only if it exists); otherwise 412 precondition_failed and nothing is written.',
          schema: { type: 'string' },
        },
        IfNoneMatch: {
          name: 'If-None-Match',
          in: 'header',
          required: false,
          description: '`*`: create only; 412 precondition_failed if the record exists.',
          schema: { type: 'string', enum: ['*'] },
        },
      },
    },
  };
}

export type OpenApiDocument = ReturnType<typeof buildOpenApiDocument>;

function inlineNamedBodies(): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const doc of Object.values(OPERATION_DOCS)) {
    if (doc.response && typeof doc.response === 'object') out[doc.response.name] = outputSchema(doc.response.schema);
  }
  return out;
}

function operationObject(route: ApiRoute, doc: OperationDoc) {
  const ability = route.anyOf
    ? `Requires any of ${route.anyOf.map((a) => `\`${a}\``).join(', ')}.`
    : route.ability === null
      ? 'Any valid key (each MCP tool checks the ability of the operation it stands for).'
      : `Requires the \`${route.ability}\` ability.`;
  return {
    operationId: route.operation,
    summary: doc.summary,
    description: `${doc.description}\n\n${ability}`,
    tags: [route.group],
    'x-required-ability': route.anyOf ?? route.ability,
    parameters: parametersOf(route, doc),
    ...(doc.body ? { requestBody: requestBodyOf(route, doc) } : {}),
    responses: {
      ...successResponses(route, doc),
      ...rawBodyResponses(doc),
      ...errorResponses(errorCodesOf(route, doc)),
    },
  };
}

function parametersOf(route: ApiRoute, doc: OperationDoc): object[] {
  const params: object[] = [];
  for (const [, name] of route.path.matchAll(/\{(\w+)\}/g)) {
    const p = PATH_PARAMETERS[name!];
    params.push({
      name,
      in: 'path',
      required: true,
      description: p?.description,
      schema: p ? inputSchema(p.schema) : { type: 'string' },
    });
  }
  if (doc.query) {
    const schema = querySchema(doc.query);
    const required = new Set((schema.required as string[] | undefined) ?? []);
    for (const [name, prop] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
      const { description, ...rest } = prop;
      params.push({
        name,
        in: 'query',
        required: required.has(name),
        ...(description ? { description } : {}),
        schema: rest,
      });
    }
  }
  if (canDryRun(route.operation)) params.push(dryRunParameter);
  if (doc.idempotent) params.push({ $ref: '#/components/parameters/IdempotencyKey' });
  if (doc.etag === 'conditional')
    params.push({ $ref: '#/components/parameters/IfMatch' }, { $ref: '#/components/parameters/IfNoneMatch' });
  return params;
}

function requestBodyOf(route: ApiRoute, doc: OperationDoc) {
  const example = requestExample(route.operation);
  return {
    required: !doc.bodyOptional,
    content: {
      'application/json': { schema: inputSchema(doc.body as v.GenericSchema), ...(example ? { example } : {}) },
    },
  };
}

function successResponses(route: ApiRoute, doc: OperationDoc): Record<string, object> {
  const out: Record<string, object> = {};
  if (doc.response) {
    const name = typeof doc.response === 'string' ? doc.response : doc.response.name;
    const example = responseExample(route.operation);
    out['200'] = {
      description: doc.summary.replace(/^./, (c) => c.toUpperCase()) + ': done.',
      headers: {
        ...(doc.idempotent ? replayableHeaderRefs() : responseHeaderRefs()),
        ...(doc.etag ? { ETag: { $ref: '#/components/headers/ETag' } } : {}),
      },
      content: {
        'application/json': {
          schema: withDryRun(route.operation, { $ref: `#/components/schemas/${name}` }),
          ...(example ? { example } : {}),
        },
      },
    };
  }
  for (const [status, description] of Object.entries(doc.otherSuccess ?? {}))
    out[status] = { description, headers: responseHeaderRefs() };
  return out;
}

/** A JSON-RPC endpoint answers malformed messages in JSON-RPC, not in the API's error shape. */
function rawBodyResponses(doc: OperationDoc): Record<string, object> {
  if (!doc.rawBody) return {};
  return {
    '400': {
      description: 'A JSON-RPC error: a parse error, an invalid request or a batch (one message per request).',
      headers: responseHeaderRefs(),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/JsonRpcResponse' } } },
    },
  };
}
