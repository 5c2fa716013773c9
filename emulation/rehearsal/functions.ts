/**
 * What the templates say about each `AWS::Lambda::Function`: its code (the asset directory in
 * `cdk.out`), handler, environment with references resolved, timeout, memory, and the identity
 * policies of its execution role (inline `Policies`, `AWS::IAM::Policy` and
 * `AWS::IAM::ManagedPolicy` resources attached to the role). AWS managed policies are named only:
 * their documents are not in the template (the basic execution role grants logs, which no SDK
 * call of ours needs).
 */
import path from 'node:path';
import type { Resolver } from './resolve.ts';
import { keyOf, resourcesOfType, type Assembly, type Json } from './template.ts';

export interface PolicyDocument {
  Version?: string;
  Statement: Json[] | Json;
}
export interface FunctionSpec {
  key: string;
  logicalId: string;
  name: string;
  arn: string;
  codeDir: string;
  /** `file.export` as in the template. */
  handler: string;
  environment: Record<string, string>;
  timeoutSeconds: number;
  memoryMb: number;
  roleArn: string;
  policies: { name: string; document: PolicyDocument }[];
  managedPolicyArns: string[];
}

function assetDir(assembly: Assembly, code: Record<string, Json>, id: string): string {
  const key = String(code.S3Key ?? '');
  const dir = assembly.assetDirs.get(key.replace(/\.zip$/, ''));
  if (!dir)
    throw new Error(
      `${id}: no asset in ${assembly.dir} for code ${JSON.stringify(code)} (inline or image code is not rehearsed)`,
    );
  return path.resolve(dir);
}

export function readFunctions(assembly: Assembly, resolver: Resolver): FunctionSpec[] {
  const policiesByRole = new Map<string, { name: string; document: PolicyDocument }[]>();
  for (const type of ['AWS::IAM::Policy', 'AWS::IAM::ManagedPolicy']) {
    for (const { stack, id, resource } of resourcesOfType(assembly, type)) {
      const p = resolver.resolve(stack, (resource.Properties ?? {}) as Json) as unknown as {
        Roles?: string[];
        PolicyDocument: PolicyDocument;
      };
      for (const role of p.Roles ?? []) {
        const list = policiesByRole.get(role) ?? [];
        list.push({ name: keyOf(stack, id), document: p.PolicyDocument });
        policiesByRole.set(role, list);
      }
    }
  }
  const roles = new Map<
    string,
    { name: string; inline: { name: string; document: PolicyDocument }[]; managed: string[] }
  >();
  for (const { stack, id, resource } of resourcesOfType(assembly, 'AWS::IAM::Role')) {
    const p = resolver.resolve(stack, (resource.Properties ?? {}) as Json) as unknown as {
      Policies?: { PolicyName: string; PolicyDocument: PolicyDocument }[];
      ManagedPolicyArns?: string[];
    };
    const physical = resolver.lookup(stack, id)!;
    roles.set(physical.attributes.Arn!, {
      name: physical.ref,
      inline: (p.Policies ?? []).map((x) => ({ name: x.PolicyName, document: x.PolicyDocument })),
      managed: p.ManagedPolicyArns ?? [],
    });
  }
  return resourcesOfType(assembly, 'AWS::Lambda::Function').map(({ stack, id, resource }) => {
    const p = resolver.resolve(stack, (resource.Properties ?? {}) as Json) as Record<string, Json>;
    const roleArn = String(p.Role);
    const role = roles.get(roleArn);
    const physical = resolver.lookup(stack, id)!;
    const env = ((p.Environment as { Variables?: Record<string, Json> } | undefined)?.Variables ?? {}) as Record<
      string,
      Json
    >;
    return {
      key: keyOf(stack, id),
      logicalId: id,
      name: physical.ref,
      arn: physical.attributes.Arn!,
      codeDir: assetDir(assembly, p.Code as Record<string, Json>, id),
      handler: String(p.Handler ?? 'index.handler'),
      environment: Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)])),
      timeoutSeconds: Number(p.Timeout ?? 3),
      memoryMb: Number(p.MemorySize ?? 128),
      roleArn,
      policies: [...(role?.inline ?? []), ...(role ? (policiesByRole.get(role.name) ?? []) : [])],
      managedPolicyArns: role?.managed ?? [],
    };
  });
}
