import * as v from 'valibot';
import { isErrorCode, type ErrorCode } from './errors.ts';
import { refused, type CallerCode, type Refused } from './outcome.ts';

/** `schema` with the description the OpenAPI document and the MCP tool schemas show for it. */
export const described = <S extends v.GenericSchema>(schema: S, description: string) =>
  v.pipe(schema, v.description(description));

/** `tag_external_ids[2]`, `customer.email`: the path of a valibot issue as the contract's `field`. */
export function fieldOf(issue: v.BaseIssue<unknown>): string | null {
  const path = issue.path ?? [];
  let out = '';
  for (const item of path) {
    const key = (item as { key: unknown }).key;
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out === '' ? null : out;
}

function messageOf(issue: v.BaseIssue<unknown>, field: string | null): string {
  const name = field ?? 'body';
  // A strict object reports an unknown key as an issue on that key, expecting `never`.
  if (issue.type === 'strict_object' && issue.expected === 'never') return `${name} is not a known field`;
  if (issue.received === 'undefined') return `${name} is required`;
  return `${name}: ${issue.message}`;
}

/**
 * The input parsed by a valibot schema, or the refusal its first issue makes: 422
 * `validation_failed` naming the field. Schemas may raise their own contract codes with `v.check`
 * + a `code:` message prefix. The caller presents the refusal (a route: `problemResult`).
 */
export function validate<const S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> | Refused {
  const result = v.safeParse(schema, input, { abortEarly: true });
  if (result.success) return result.output;
  const issue = result.issues[0];
  const field = fieldOf(issue);
  const custom = /^([a-z_]+):\s*(.*)$/.exec(issue.message);
  const code = custom?.[1];
  if (code !== undefined && custom?.[2] !== undefined && isErrorCode(code) && CUSTOM_CODES.has(code)) {
    return refused(code as CallerCode, custom[2], field);
  }
  return refused('validation_failed', messageOf(issue, field), field);
}

/** Contract codes that a schema may raise itself (message `code: human text`). */
const CUSTOM_CODES: ReadonlySet<ErrorCode> = new Set(['invalid_image_url', 'reserved_tag_value', 'status_not_allowed']);

/** An integer from `min` to `max`, as a typed value (MCP arguments) and, through `fromQuery`, as a query string. */
export const integerIn = (min: number, max: number) =>
  v.pipe(
    v.number('must be an integer'),
    v.integer('must be an integer'),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );

/** Query values arrive as strings: a strict decimal integer, then the typed schema's bounds. */
export const fromQuery = <S extends v.GenericSchema<number, number>>(schema: S) =>
  v.pipe(v.string(), v.regex(/^-?\d{1,16}$/, 'must be an integer'), v.transform(Number), schema);

/**
 * The caller's id for a product, category, tag or page (docs/contract.md#limits). The alphabet is what
 * every CRM's ids fit in and what needs no escaping in a URL path or a sort key.
 */
export const EXTERNAL_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

export const EXTERNAL_ID_RULE = '1-128 characters of A-Z a-z 0-9 . _ : -';

export const ExternalIdSchema = v.pipe(v.string(), v.regex(EXTERNAL_ID_PATTERN, `must be ${EXTERNAL_ID_RULE}`));

export function isExternalId(value: unknown): value is string {
  return typeof value === 'string' && EXTERNAL_ID_PATTERN.test(value);
}

/**
 * API Gateway REST hands path parameters over as the client encoded them, the local gateway
 * decodes them. `%` is outside the alphabet, so one more decode can never turn a valid id into
 * a different valid one; it only lets `a%3Ab` (what encodeURIComponent makes of `a:b`) through.
 */
export function externalIdFromPath(raw: string | undefined): string | undefined {
  let value = raw ?? '';
  if (value.includes('%')) {
    try {
      value = decodeURIComponent(value);
    } catch {
      return undefined;
    }
  }
  return isExternalId(value) ? value : undefined;
}

/** The `{external_id}` of a catalog or page path, or the 422 naming `external_id` (docs/contract.md#limits). */
export function validateExternalId(pathParameters: Record<string, string>): string | Refused {
  return (
    externalIdFromPath(pathParameters.external_id) ??
    refused('validation_failed', `external_id must be ${EXTERNAL_ID_RULE}`, 'external_id')
  );
}
