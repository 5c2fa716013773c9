import * as v from 'valibot';
import { MCP_MODES } from '#domain/key/api-key.ts';

/** Argument schemas the admin commands share (the CLI passes every flag as a string). */
export const KeyIdArg = v.pipe(
  v.union([v.number(), v.string()]),
  v.transform(Number),
  v.number(),
  v.integer('must be an integer'),
  v.minValue(1, 'must be a key id'),
);

/** An ISO 4217 currency code (`EUR`). */
export const CurrencyArg = v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code like EUR'));

/** `--mcp read-only`: the MCP server offers the key only its read tools (docs/mcp.md#read-only-keys). */
export const McpArg = v.picklist(MCP_MODES, `must be one of ${MCP_MODES.join(', ')}`);

export const StoreIdArg = v.pipe(
  v.string(),
  v.regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'must be 1-63 lower-case letters, digits or hyphens'),
);

/** A whole number between `min` and `max`, given as a number or (from the CLI) a string. */
export const IntegerArg = (min: number, max: number) =>
  v.pipe(
    v.union([v.number(), v.string()]),
    v.transform(Number),
    v.number(),
    v.integer('must be an integer'),
    v.minValue(min),
    v.maxValue(max),
  );

/** `--since`: an ISO 8601 time, normalized to UTC. */
export const Since = v.pipe(
  v.string(),
  v.check(
    (s) => /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(s) && !Number.isNaN(Date.parse(s)),
    'must be an ISO 8601 time like 2026-11-24T10:00:00Z',
  ),
  v.transform((s) => new Date(Date.parse(s)).toISOString()),
);

export const RedeliverState = v.picklist(['pending', 'delivered', 'failed'], 'must be pending, delivered or failed');
