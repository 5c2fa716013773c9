import type * as v from 'valibot';
import { toJsonSchema } from '@valibot/to-json-schema';
import { IDEMPOTENCY_ARG } from './args.ts';

export interface JsonSchemaObject {
  type: 'object';
  properties: Record<string, object>;
  required?: string[];
  additionalProperties: false;
  [k: string]: unknown;
}

const IDEMPOTENCY_KEY_SCHEMA = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  description:
    'Required. A unique value per intended change (e.g. a UUID). Retrying with the same key and arguments returns the first result instead of acting twice; the same key with other arguments is refused.',
};

/**
 * A tool's JSON Schema, generated from the valibot schema its arguments are validated with (the
 * endpoint's own schemas): what the client sees is what the server checks. Conversion stops at
 * type transformations (the input type) and leaves out checks JSON Schema cannot express
 * (sanitizing, reserved values); those are still enforced and answered as tool errors.
 */
export function inputSchemaOf(args: v.GenericSchema, options: { idempotent: boolean }): JsonSchemaObject {
  const { $schema: _dialect, ...schema } = toJsonSchema(args, {
    typeMode: 'input',
    errorMode: 'ignore',
  }) as JsonSchemaObject & { $schema?: string };
  if (!options.idempotent) return schema;
  return {
    ...schema,
    properties: { ...schema.properties, [IDEMPOTENCY_ARG]: IDEMPOTENCY_KEY_SCHEMA },
    required: [...(schema.required ?? []), IDEMPOTENCY_ARG],
  };
}
