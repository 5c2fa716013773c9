/**
 * The AWS WAF web ACL associated with the API's stage, evaluated before API Gateway handles the
 * request: rules in priority order, the first Block or Allow decides, Count goes on, then the
 * default action. A Block answers its custom response (status, body by key, headers), or API
 * Gateway's `WAF_FILTERED` gateway response without one.
 *
 * Statements evaluated: byte match, regex match, size constraint, and/or/not, on a single header,
 * the method, the URI path, the query string, a query argument or the body (regional resources
 * inspect its first 16 KB; OversizeHandling decides beyond). Rate-based rules, managed rule
 * groups and IP sets are not evaluated (they never match here), which the log says once each.
 */
import type { Json } from './template.ts';

export interface WebAcl {
  name: string;
  rules: { name: string; priority: number; action: Record<string, Json>; statement: Record<string, Json> }[];
  defaultAction: Record<string, Json>;
  bodies: Record<string, { ContentType?: string; Content?: string }>;
}

export interface WafRequest {
  method: string;
  path: string;
  query: string;
  /** Lower-cased names. */
  headers: Record<string, string>;
  body: Buffer;
}

export type WafVerdict =
  | { action: 'allow' }
  | { action: 'block'; response?: { status: number; headers: Record<string, string>; body: string } };

const BODY_INSPECTION_LIMIT = 16 * 1024;
const CONTENT_TYPES: Record<string, string> = {
  APPLICATION_JSON: 'application/json',
  TEXT_PLAIN: 'text/plain',
  TEXT_HTML: 'text/html',
};
const reported = new Set<string>();

function notEvaluated(kind: string): false {
  if (!reported.has(kind)) {
    reported.add(kind);
    process.stderr.write(`rehearsal: WAF ${kind} is not evaluated (never matches here)\n`);
  }
  return false;
}

/** The inspected value of a field, or undefined when it is absent (a missing header matches nothing). */
function fieldValue(field: Record<string, Json>, req: WafRequest): { value: string; oversize: boolean } | undefined {
  const [kind, spec] = Object.entries(field)[0] ?? [];
  const s = (spec ?? {}) as Record<string, Json>;
  switch (kind) {
    case 'SingleHeader': {
      const v = req.headers[String(s.Name).toLowerCase()];
      return v === undefined ? undefined : { value: v, oversize: false };
    }
    case 'Method':
      return { value: req.method, oversize: false };
    case 'UriPath':
      return { value: req.path, oversize: false };
    case 'QueryString':
      return { value: req.query, oversize: false };
    case 'SingleQueryArgument': {
      const v = new URLSearchParams(req.query).get(String(s.Name));
      return v === null ? undefined : { value: v, oversize: false };
    }
    case 'Body':
      return {
        value: req.body.subarray(0, BODY_INSPECTION_LIMIT).toString('latin1'),
        oversize: req.body.length > BODY_INSPECTION_LIMIT,
      };
    default:
      notEvaluated(`field ${kind}`);
      return undefined;
  }
}

function transform(value: string, transformations: Json): string {
  const list = ((transformations ?? []) as { Priority: number; Type: string }[])
    .slice()
    .sort((a, b) => a.Priority - b.Priority);
  return list.reduce(
    (v, t) => (t.Type === 'LOWERCASE' ? v.toLowerCase() : t.Type === 'URL_DECODE' ? decodeURIComponent(v) : v),
    value,
  );
}

function matches(
  req: WafRequest,
  field: Record<string, Json> | undefined,
  test: (value: string) => boolean,
  s: Record<string, Json>,
): boolean {
  const found = field ? fieldValue(field, req) : undefined;
  if (!found) return false;
  if (found.oversize) {
    const handling = String((field!.Body as Record<string, Json> | undefined)?.OversizeHandling ?? 'CONTINUE');
    if (handling === 'MATCH') return true;
    if (handling === 'NO_MATCH') return false;
  }
  return test(transform(found.value, s.TextTransformations ?? null));
}

export function statementMatches(statement: Record<string, Json>, req: WafRequest): boolean {
  const [kind, spec] = Object.entries(statement)[0] ?? [];
  const s = (spec ?? {}) as Record<string, Json>;
  const field = s.FieldToMatch as Record<string, Json> | undefined;
  switch (kind) {
    case 'ByteMatchStatement': {
      const needle = String(s.SearchString ?? '');
      const position = String(s.PositionalConstraint);
      return matches(
        req,
        field,
        (v) => {
          if (position === 'EXACTLY') return v === needle;
          if (position === 'STARTS_WITH') return v.startsWith(needle);
          if (position === 'ENDS_WITH') return v.endsWith(needle);
          if (position === 'CONTAINS_WORD')
            return new RegExp(`(^|\\W)${needle.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\W|$)`).test(v);
          return v.includes(needle);
        },
        s,
      );
    }
    case 'RegexMatchStatement':
      return matches(req, field, (v) => new RegExp(String(s.RegexString)).test(v), s);
    case 'SizeConstraintStatement': {
      const size = Number(s.Size);
      const op = String(s.ComparisonOperator);
      return matches(
        req,
        field,
        (v) => {
          const n = Buffer.byteLength(v, 'latin1');
          return op === 'EQ'
            ? n === size
            : op === 'NE'
              ? n !== size
              : op === 'LE'
                ? n <= size
                : op === 'LT'
                  ? n < size
                  : op === 'GE'
                    ? n >= size
                    : n > size;
        },
        s,
      );
    }
    case 'AndStatement':
      return ((s.Statements ?? []) as Record<string, Json>[]).every((x) => statementMatches(x, req));
    case 'OrStatement':
      return ((s.Statements ?? []) as Record<string, Json>[]).some((x) => statementMatches(x, req));
    case 'NotStatement':
      return !statementMatches(s.Statement as Record<string, Json>, req);
    default:
      return notEvaluated(kind ?? 'empty statement');
  }
}

function blockResponse(acl: WebAcl, action: Record<string, Json>): WafVerdict {
  const custom = (action.CustomResponse ?? undefined) as
    | { ResponseCode?: number; CustomResponseBodyKey?: string; ResponseHeaders?: { Name: string; Value: string }[] }
    | undefined;
  if (!custom) return { action: 'block' };
  const body = custom.CustomResponseBodyKey ? acl.bodies[custom.CustomResponseBodyKey] : undefined;
  const headers: Record<string, string> = {
    'Content-Type': CONTENT_TYPES[body?.ContentType ?? 'TEXT_PLAIN'] ?? 'text/plain',
  };
  for (const h of custom.ResponseHeaders ?? []) headers[h.Name] = h.Value;
  return {
    action: 'block',
    response: { status: Number(custom.ResponseCode ?? 403), headers, body: body?.Content ?? '' },
  };
}

export function evaluateWebAcl(acl: WebAcl, req: WafRequest): WafVerdict {
  for (const rule of [...acl.rules].sort((a, b) => a.priority - b.priority)) {
    const [kind, action] = Object.entries(rule.action)[0] ?? ['Count', {}];
    if (kind === 'Count' || !statementMatches(rule.statement, req)) continue;
    return kind === 'Block' ? blockResponse(acl, (action ?? {}) as Record<string, Json>) : { action: 'allow' };
  }
  const [kind, action] = Object.entries(acl.defaultAction)[0] ?? ['Allow', {}];
  return kind === 'Block' ? blockResponse(acl, (action ?? {}) as Record<string, Json>) : { action: 'allow' };
}
