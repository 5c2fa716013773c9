import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AnyNode, parse, type Property } from 'acorn';
import { packageFolder, transformedCopy } from './bundle-cache.ts';

/**
 * The X-Ray SDK (aws-xray-sdk-core) as the webhook signer bundles it: a copy whose index loads
 * the parts the signer never runs at their first use instead of at import.
 *
 * The signer's Powertools Tracer (functions/webhooks/tracing.ts) uses the SDK's segments, its
 * context and its AWS SDK v3 patcher. The index (dist/lib/aws-xray.js), though, builds its
 * namespace object by requiring every part as it loads: the patchers for the AWS SDK v2, for
 * http/https and for promises (the first one with semver, which compiles ~40 regular expressions
 * as it loads), the EC2, ECS and Beanstalk plugins, and the SQL helpers. In the copy, each member
 * of the namespace that comes from one of DEFERRED_MODULES is
 *
 * - a getter that requires its module when the member is first read, or
 * - for the members Tracer destructures as it loads (CALLED_LATER): a function that requires its
 *   module when first called and calls the SDK's own function with the same `this` and arguments.
 *   Tracer calls none of them with our options (no AWS SDK v2 client, `captureHTTPsRequests:
 *   false`), so none ever loads; test/unit/xray-sdk-transform.test.ts checks both.
 *
 * The members, and everything else of the SDK, are otherwise the SDK's own. infra/bundling.ts
 * aliases `aws-xray-sdk-core` to the copy (infra/bundle-cache.ts) for every bundle; the source
 * tree's own imports (the tests, the local server) use the SDK unchanged.
 */

/** The modules of the SDK that the index requires for members the signer never uses. */
export const DEFERRED_MODULES = [
  './patchers/aws_p',
  './patchers/http_p',
  './patchers/promise_p',
  './database/sql_data',
  './segments/plugins/ec2_plugin',
  './segments/plugins/ecs_plugin',
  './segments/plugins/elastic_beanstalk_plugin',
] as const;

/** Members of those modules that Powertools Tracer destructures at import: a getter would load them at once. */
export const CALLED_LATER = ['captureAWS', 'captureAWSClient', 'captureHTTPsGlobal'] as const;

/** `require('x')` or `require('x').name`: the module and the member read from it. */
function requireOf(node: AnyNode): { module: string; member: string | undefined } | undefined {
  const call = node.type === 'MemberExpression' ? node.object : node;
  if (
    call.type !== 'CallExpression' ||
    call.callee.type !== 'Identifier' ||
    call.callee.name !== 'require' ||
    call.arguments.length !== 1 ||
    call.arguments[0]?.type !== 'Literal' ||
    typeof call.arguments[0].value !== 'string'
  )
    return undefined;
  if (node.type !== 'MemberExpression') return { module: call.arguments[0].value, member: undefined };
  if (node.computed || node.property.type !== 'Identifier') return undefined;
  return { module: call.arguments[0].value, member: node.property.name };
}

/**
 * `source` (the SDK's aws-xray.js) with the members that come from DEFERRED_MODULES loaded at
 * their first use, as described above; `deferred` lists them. Fails if a module of the list is no
 * longer required there, so a release that reshapes the index is noticed at the build.
 */
export function deferIndexRequires(source: string): { code: string; deferred: string[] } {
  const program = parse(source, { ecmaVersion: 'latest', sourceType: 'script' });
  const edits: Array<{ start: number; end: number; text: string }> = [];
  const deferred: string[] = [];
  const seen = new Set<string>();
  const visit = (properties: Array<Property | AnyNode>, path: string) => {
    for (const property of properties) {
      if (property.type !== 'Property' || property.key.type !== 'Identifier' || property.kind !== 'init') continue;
      const key = property.key.name;
      if (property.value.type === 'ObjectExpression') {
        visit(property.value.properties, `${path}${key}.`);
        continue;
      }
      const required = requireOf(property.value);
      if (!required || !(DEFERRED_MODULES as readonly string[]).includes(required.module)) continue;
      seen.add(required.module);
      const load = `require(${JSON.stringify(required.module)})${required.member ? `.${required.member}` : ''}`;
      const text = (CALLED_LATER as readonly string[]).includes(key)
        ? `${key}: function ${key}() { return ${load}.apply(this, arguments); }`
        : `get ${key}() { return ${load}; }`;
      edits.push({ start: property.start, end: property.end, text });
      deferred.push(`${path}${key}`);
    }
  };
  for (const statement of program.body) {
    if (statement.type !== 'VariableDeclaration') continue;
    for (const { id, init } of statement.declarations)
      if (id.type === 'Identifier' && id.name === 'AWSXRay' && init?.type === 'ObjectExpression')
        visit(init.properties, '');
  }
  const missing = DEFERRED_MODULES.filter((m) => !seen.has(m));
  if (missing.length > 0)
    throw new Error(`aws-xray-sdk-core's index no longer requires ${missing.join(', ')}; update infra/xray-sdk.ts`);
  let code = source;
  for (const { start, end, text } of edits.sort((a, b) => b.start - a.start))
    code = code.slice(0, start) + text + code.slice(end);
  return { code, deferred };
}

/** The installed SDK's package folder. */
export const xraySdkPackage = (): string => packageFolder('aws-xray-sdk-core');

/** The path of the copy of the SDK's package with its index transformed (infra/bundle-cache.ts). */
export function xraySdkForBundling(from: string = xraySdkPackage()): string {
  const index = join(from, 'dist', 'lib', 'aws-xray.js');
  const source = readFileSync(index, 'utf8');
  return transformedCopy({
    name: 'aws-xray-sdk-core',
    from,
    inputs: [source, readFileSync(fileURLToPath(import.meta.url), 'utf8')],
    change: (copy) => writeFileSync(join(copy, 'dist', 'lib', 'aws-xray.js'), deferIndexRequires(source).code),
  });
}
