/**
 * The REST API as the templates declare it: the `AWS::ApiGateway::Resource` tree, each
 * `AWS::ApiGateway::Method` with its authorizer and Lambda proxy integration, the
 * `AWS::ApiGateway::Authorizer`s and the `AWS::ApiGateway::GatewayResponse`s.
 */
import type { Resolver } from './resolve.ts';
import { resourcesOfType, type Assembly, type Json } from './template.ts';
import type { WebAcl } from './waf.ts';

export interface ApiMethod {
  resourcePath: string;
  httpMethod: string;
  authorizationType: string;
  authorizer: ApiAuthorizer | undefined;
  /** ARN of the function a Lambda proxy integration calls; undefined for other integrations. */
  functionArn: string | undefined;
  integration: ApiIntegration;
}
/** What the rehearsal reads of an `Integration` (AWS_PROXY and MOCK are served). */
export interface ApiIntegration {
  type: string;
  /** API Gateway's integration timeout: 29 s unless the template sets less (or more, by quota). */
  timeoutMs: number;
  /** CONVERT_TO_TEXT, CONVERT_TO_BINARY or undefined (binary payloads pass through untouched). */
  contentHandling: string | undefined;
  requestTemplates: Record<string, string>;
  responses: IntegrationResponse[];
}
export interface IntegrationResponse {
  statusCode: string;
  selectionPattern: string | undefined;
  contentHandling: string | undefined;
  templates: Record<string, string>;
  /** `method.response.header.X` → its source (`'literal'` or `integration.response.header.Y`). */
  parameters: Record<string, string>;
}
export interface ApiAuthorizer {
  id: string;
  type: string;
  functionArn: string;
  /** Header names from `method.request.header.X` sources. */
  identityHeaders: string[];
  ttlSeconds: number;
}
export interface GatewayResponse {
  statusCode: number | undefined;
  headers: Record<string, string>;
  template: string | undefined;
}
export interface ApiModel {
  restApiId: string;
  stage: string;
  methods: ApiMethod[];
  responses: Map<string, GatewayResponse>;
  /** The API's `BinaryMediaTypes` (`image/png`, `*\/*`): payloads of these types travel as bytes. */
  binaryMediaTypes: string[];
  /** The web ACL associated with the stage, if any. */
  webAcl: WebAcl | undefined;
  /** The stage's access log: destination log group ARN and the line's format (`$context.*`). */
  accessLog: { destinationArn: string; format: string } | undefined;
}

const functionArnOf = (uri: string) => /\/functions\/(.+)\/invocations$/.exec(uri)?.[1];

/** The first REST API of the templates (this service deploys one). */
export function readApi(assembly: Assembly, resolver: Resolver): ApiModel | undefined {
  const api = resourcesOfType(assembly, 'AWS::ApiGateway::RestApi')[0];
  if (!api) return undefined;
  const restApiId = resolver.lookup(api.stack, api.id)!.ref;
  const props = (l: { stack: string; resource: { Properties?: Record<string, Json> } }) =>
    resolver.resolve(l.stack, (l.resource.Properties ?? {}) as Json) as Record<string, Json>;
  const ofApi = (type: string) => resourcesOfType(assembly, type).filter((r) => props(r).RestApiId === restApiId);

  const root = resolver.lookup(api.stack, api.id)!.attributes.RootResourceId!;
  const parents = new Map<string, { parent: string; part: string }>();
  for (const r of ofApi('AWS::ApiGateway::Resource')) {
    const p = props(r);
    parents.set(resolver.lookup(r.stack, r.id)!.ref, { parent: String(p.ParentId), part: String(p.PathPart) });
  }
  const pathOf = (id: string): string => {
    if (id === root) return '';
    const node = parents.get(id);
    if (!node) throw new Error(`API resource ${id} has no parent in the templates`);
    return `${pathOf(node.parent)}/${node.part}`;
  };

  const authorizers = new Map<string, ApiAuthorizer>();
  for (const a of ofApi('AWS::ApiGateway::Authorizer')) {
    const p = props(a);
    const id = resolver.lookup(a.stack, a.id)!.ref;
    authorizers.set(id, {
      id,
      type: String(p.Type),
      functionArn: functionArnOf(String(p.AuthorizerUri)) ?? String(p.AuthorizerUri),
      identityHeaders: String(p.IdentitySource ?? '')
        .split(',')
        .map((s) => /^method\.request\.header\.(.+)$/.exec(s.trim())?.[1]?.toLowerCase())
        .filter((h): h is string => Boolean(h)),
      ttlSeconds: Number(p.AuthorizerResultTtlInSeconds ?? 300),
    });
  }

  const methods = ofApi('AWS::ApiGateway::Method').map((m) => {
    const p = props(m);
    const integration = (p.Integration ?? {}) as Record<string, Json>;
    const integrationResponses = (integration.IntegrationResponses ?? []) as Record<string, Json>[];
    return {
      resourcePath: pathOf(String(p.ResourceId)) || '/',
      httpMethod: String(p.HttpMethod),
      authorizationType: String(p.AuthorizationType ?? 'NONE'),
      authorizer: p.AuthorizerId ? authorizers.get(String(p.AuthorizerId)) : undefined,
      functionArn: integration.Type === 'AWS_PROXY' ? functionArnOf(String(integration.Uri)) : undefined,
      integration: {
        type: String(integration.Type ?? 'AWS_PROXY'),
        timeoutMs: Number(integration.TimeoutInMillis ?? 29_000),
        contentHandling: integration.ContentHandling ? String(integration.ContentHandling) : undefined,
        requestTemplates: (integration.RequestTemplates ?? {}) as Record<string, string>,
        responses: integrationResponses.map((r) => ({
          statusCode: String(r.StatusCode),
          selectionPattern: r.SelectionPattern ? String(r.SelectionPattern) : undefined,
          contentHandling: r.ContentHandling ? String(r.ContentHandling) : undefined,
          templates: (r.ResponseTemplates ?? {}) as Record<string, string>,
          parameters: (r.ResponseParameters ?? {}) as Record<string, string>,
        })),
      },
    };
  });

  const responses = new Map<string, GatewayResponse>();
  for (const r of ofApi('AWS::ApiGateway::GatewayResponse')) {
    const p = props(r);
    responses.set(String(p.ResponseType), gatewayResponseOf(p));
  }
  const stageProps = resourcesOfType(assembly, 'AWS::ApiGateway::Stage')
    .map(props)
    .find((s) => s.RestApiId === restApiId);
  const stage = stageProps?.StageName;
  const logSetting = stageProps?.AccessLogSetting as { DestinationArn?: string; Format?: string } | undefined;
  const accessLog =
    logSetting?.DestinationArn && logSetting.Format
      ? { destinationArn: String(logSetting.DestinationArn), format: String(logSetting.Format) }
      : undefined;
  // The API's own escaping of `/` (`~1`, as in its patch operations) may appear in templates too.
  const binaryMediaTypes = ((props(api).BinaryMediaTypes ?? []) as string[]).map((t) =>
    String(t).replaceAll('~1', '/'),
  );
  const stageName = String(stage ?? 'prod');
  return {
    restApiId,
    stage: stageName,
    methods,
    responses,
    binaryMediaTypes,
    webAcl: readWebAcl(assembly, resolver, `/restapis/${restApiId}/stages/`),
    accessLog,
  };
}

/** An `AWS::ApiGateway::GatewayResponse`'s properties (references resolved) as the gateway renders them. */
export function gatewayResponseOf(p: Record<string, Json>): GatewayResponse {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries((p.ResponseParameters ?? {}) as Record<string, string>)) {
    const name = /^gatewayresponse\.header\.(.+)$/.exec(k)?.[1];
    if (name) headers[name] = v.replace(/^'(.*)'$/s, '$1');
  }
  const templates = (p.ResponseTemplates ?? {}) as Record<string, string>;
  return {
    statusCode: p.StatusCode ? Number(p.StatusCode) : undefined,
    headers,
    template: templates['application/json'] ?? Object.values(templates)[0],
  };
}

/** The stage's Ref is the rehearsal's own name for it, so any stage of this API counts. */
function readWebAcl(assembly: Assembly, resolver: Resolver, stagesOfApi: string): WebAcl | undefined {
  const props = (l: { stack: string; resource: { Properties?: Record<string, Json> } }) =>
    resolver.resolve(l.stack, (l.resource.Properties ?? {}) as Json) as Record<string, Json>;
  const association = resourcesOfType(assembly, 'AWS::WAFv2::WebACLAssociation')
    .map(props)
    .find((a) => String(a.ResourceArn).includes(stagesOfApi));
  if (!association) return undefined;
  const acl = resourcesOfType(assembly, 'AWS::WAFv2::WebACL').find(
    (w) => resolver.lookup(w.stack, w.id)?.attributes.Arn === association.WebACLArn,
  );
  if (!acl) return undefined;
  const p = props(acl);
  return {
    name: acl.id,
    rules: ((p.Rules ?? []) as Record<string, Json>[]).map((r) => ({
      name: String(r.Name),
      priority: Number(r.Priority ?? 0),
      // A rule-group reference has OverrideAction instead; `None` lets the group's own actions stand.
      action: (r.Action ?? { Count: {} }) as Record<string, Json>,
      statement: (r.Statement ?? {}) as Record<string, Json>,
    })),
    defaultAction: (p.DefaultAction ?? { Allow: {} }) as Record<string, Json>,
    bodies: (p.CustomResponseBodies ?? {}) as WebAcl['bodies'],
  };
}

/** API Gateway's choice among resources: literal parts before `{param}`, `{proxy+}` last. */
export function matchMethod(
  model: ApiModel,
  httpMethod: string,
  path: string,
): { method: ApiMethod | undefined; resourceFound: boolean; pathParameters: Record<string, string> | null } {
  const segments = path.split('/').filter(Boolean);
  let best: { resource: string; params: Record<string, string>; score: number } | undefined;
  for (const resource of new Set(model.methods.map((m) => m.resourcePath))) {
    const parts = resource.split('/').filter(Boolean);
    const params: Record<string, string> = {};
    let score = 0;
    let ok = true;
    for (let i = 0; i < parts.length && ok; i++) {
      const part = parts[i]!;
      const greedy = /^\{(.+)\+\}$/.exec(part);
      if (greedy) {
        if (i >= segments.length) ok = false;
        else params[greedy[1]!] = segments.slice(i).map(decodeURIComponent).join('/');
        score += 1;
        break;
      }
      const seg = segments[i];
      if (seg === undefined) ok = false;
      else if (/^\{.+\}$/.test(part)) {
        params[part.slice(1, -1)] = decodeURIComponent(seg);
        score += 2;
      } else if (part === seg) score += 3;
      else ok = false;
      if (ok && i === parts.length - 1 && segments.length !== parts.length) ok = false;
    }
    if (parts.length === 0 && segments.length > 0) ok = false;
    if (ok && (!best || score > best.score)) best = { resource, params, score };
  }
  if (!best) return { method: undefined, resourceFound: false, pathParameters: null };
  // A method of the request's own verb wins over the resource's ANY, whatever the template's order.
  const ofResource = model.methods.filter((m) => m.resourcePath === best.resource);
  const method = ofResource.find((m) => m.httpMethod === httpMethod) ?? ofResource.find((m) => m.httpMethod === 'ANY');
  return { method, resourceFound: true, pathParameters: Object.keys(best.params).length ? best.params : null };
}
