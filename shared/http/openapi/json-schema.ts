/**
 * valibot → JSON Schema 2020-12 (OpenAPI 3.1's dialect) with @valibot/to-json-schema, the
 * converter the MCP tool schemas use. Named response shapes become `$ref`s into
 * components.schemas. Checks JSON Schema cannot express (sanitizing, reserved values) are left
 * out of the document and still enforced.
 */
import type * as v from 'valibot';
import { toJsonSchema, toJsonSchemaDefs, type ConversionConfig } from '@valibot/to-json-schema';
import { RESOURCE_SCHEMAS } from './resources.ts';

export type JsonSchema = Record<string, unknown>;

const COMPONENTS = '#/components/schemas/';

/** Rewrites `#/$defs/X` to components and drops the per-schema dialect and `$defs`. */
function clean(schema: unknown): JsonSchema {
  const text = JSON.stringify(schema).replaceAll('"#/$defs/', `"${COMPONENTS}`);
  const { $schema: _dialect, $defs: _defs, ...rest } = JSON.parse(text) as JsonSchema;
  return rest;
}

const base = { target: 'draft-2020-12', errorMode: 'ignore' } as const satisfies ConversionConfig;

/** A response body or a named shape: output types, named shapes referenced. */
export function outputSchema(schema: v.GenericSchema): JsonSchema {
  return clean(toJsonSchema(schema, { ...base, typeMode: 'output', definitions: RESOURCE_SCHEMAS }));
}

/** A request body: what a client sends (input types, before transformations and defaults). */
export function inputSchema(schema: v.GenericSchema): JsonSchema {
  return clean(toJsonSchema(schema, { ...base, typeMode: 'input' }));
}

/**
 * Query parameters arrive as strings and are converted by the handler (`fromQuery`): the
 * document states the type they are converted to, as OpenAPI parameters do.
 */
export function querySchema(schema: v.GenericSchema): JsonSchema {
  const converted = clean(toJsonSchema(schema, { ...base, typeMode: 'output' }));
  const props = (converted.properties ?? {}) as Record<string, JsonSchema>;
  for (const prop of Object.values(props)) {
    if (prop.type === 'integer' && typeof prop.default === 'string') prop.default = Number(prop.default);
  }
  return converted;
}

/** components.schemas: every named response shape once. */
export function componentSchemas(): Record<string, JsonSchema> {
  const defs = toJsonSchemaDefs(RESOURCE_SCHEMAS, { ...base, typeMode: 'output' });
  return Object.fromEntries(Object.entries(defs).map(([name, schema]) => [name, clean(schema)]));
}
