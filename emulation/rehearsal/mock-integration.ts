/**
 * A MOCK integration as API Gateway runs it: the request template chosen by Content-Type renders
 * `{"statusCode": N}`, N selects the integration response (its SelectionPattern, else the one
 * without), whose template and `method.response.header.*` parameters make the answer.
 *
 * Under binary media types: a request whose Content-Type matches is a binary payload, and with
 * no `contentHandling` on the integration a binary payload passes through untransformed, so no
 * request template runs, the mock gets no status code and API Gateway answers 500 (the reported
 * behaviour of MOCK methods, CORS preflights among them, once an API declares `*\/*`; the fix is
 * `contentHandling: CONVERT_TO_TEXT`). The rehearsal answers the same, so a template that would
 * fail so in AWS fails here too.
 */
import type { ApiIntegration } from './api-model.ts';

export interface VelocityContext {
  context: Record<string, unknown>;
  stageVariables: Record<string, string>;
}

export type MockOutcome =
  | { ok: true; status: number; headers: Record<string, string>; body: string }
  | { ok: false; reason: string };

/** Whether `contentType` is one of the API's binary media types (`*` wildcards allowed). */
export function isBinary(binaryMediaTypes: string[], contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (!type) return false;
  return binaryMediaTypes.some((pattern) => {
    const re = new RegExp(
      `^${pattern
        .toLowerCase()
        .split('*')
        .map((s) => s.replace(/[.+?^${}()|[\]\\/]/g, '\\$&'))
        .join('[^/]*')}$`,
    );
    return re.test(type);
  });
}

/**
 * The part of the Velocity Template Language our templates use: `#[[...]]#` unparsed blocks and
 * `$context.a.b` / `$stageVariables.x` references (also in `${...}` form). Anything else stays
 * literal, which shows up as a wrong body rather than a plausible one.
 */
export function renderVelocity(template: string, vars: VelocityContext): string {
  return template
    .split(/(#\[\[[\s\S]*?\]\]#)/)
    .map((part) => {
      if (part.startsWith('#[[') && part.endsWith(']]#')) return part.slice(3, -3);
      return part.replace(/\$\{?(context|stageVariables)((?:\.\w+)+)\}?/g, (_whole, root: string, path: string) => {
        let value: unknown = root === 'context' ? vars.context : vars.stageVariables;
        for (const key of path.slice(1).split('.')) value = (value as Record<string, unknown> | undefined)?.[key];
        return value === undefined || value === null ? '' : String(value);
      });
    })
    .join('');
}

const pick = (templates: Record<string, string>, contentType: string) =>
  templates[contentType] ?? templates['application/json'] ?? Object.values(templates)[0];

export function runMock(
  integration: ApiIntegration,
  request: { contentType: string | undefined; binaryMediaTypes: string[] },
  vars: VelocityContext,
): MockOutcome {
  // API Gateway takes a request without Content-Type as application/json.
  const contentType = (request.contentType ?? 'application/json').split(';')[0]!.trim().toLowerCase();
  if (isBinary(request.binaryMediaTypes, contentType) && integration.contentHandling !== 'CONVERT_TO_TEXT') {
    return {
      ok: false,
      reason: `the request is binary (Content-Type ${contentType} matches binaryMediaTypes ${JSON.stringify(request.binaryMediaTypes)}) and the MOCK integration has no contentHandling, so no request template runs`,
    };
  }
  const template = pick(integration.requestTemplates, contentType);
  if (template === undefined)
    return { ok: false, reason: 'the MOCK integration has no request template to render {"statusCode": ...} from' };
  let status: number;
  try {
    status = Number((JSON.parse(renderVelocity(template, vars)) as { statusCode?: unknown }).statusCode);
  } catch {
    return { ok: false, reason: 'the MOCK request template does not render JSON' };
  }
  if (!Number.isInteger(status)) return { ok: false, reason: 'the MOCK request template renders no statusCode' };
  const selected =
    integration.responses.find(
      (r) => r.selectionPattern !== undefined && new RegExp(`^(?:${r.selectionPattern})$`).test(String(status)),
    ) ?? integration.responses.find((r) => r.selectionPattern === undefined);
  if (!selected)
    return { ok: false, reason: `no integration response matches status ${status} and none is the default` };
  const responseTemplate = pick(selected.templates, 'application/json');
  const headers: Record<string, string> = {
    'Content-Type':
      selected.templates['application/json'] !== undefined || !responseTemplate
        ? 'application/json'
        : Object.keys(selected.templates)[0]!,
  };
  for (const [target, source] of Object.entries(selected.parameters)) {
    const name = /^method\.response\.header\.(.+)$/.exec(target)?.[1];
    const literal = /^'(.*)'$/s.exec(source)?.[1];
    if (name && literal !== undefined) headers[name] = literal;
  }
  return {
    ok: true,
    status: Number(selected.statusCode),
    headers,
    body: responseTemplate === undefined ? '' : renderVelocity(responseTemplate, vars),
  };
}
