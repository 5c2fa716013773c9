/**
 * The synthesized cloud assembly (`cdk.out`): every stack's template and the asset directories
 * the Lambda code comes from. Nothing here knows construct ids; resources are found by type.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export interface Resource {
  Type: string;
  Properties?: Record<string, Json>;
  DependsOn?: string | string[];
}
export interface Template {
  Resources: Record<string, Resource>;
  Outputs?: Record<string, { Value: Json; Export?: { Name: Json } }>;
}
export interface StackTemplate {
  stackName: string;
  template: Template;
}
/** A resource with the stack it belongs to (logical ids are unique per stack only). */
export interface Located {
  stack: string;
  id: string;
  resource: Resource;
}

export interface Assembly {
  dir: string;
  stacks: StackTemplate[];
  /** Asset hash (the S3 object key without `.zip`) → directory in the assembly. */
  assetDirs: Map<string, string>;
  region: string;
  account: string;
}

interface Manifest {
  artifacts?: Record<string, { type: string; environment?: string; properties?: { templateFile?: string } }>;
}

/** Reads `cdk.out`: the stacks in manifest order and the file assets of each. */
export function readAssembly(dir: string, defaults: { region: string; account: string }): Assembly {
  const manifestFile = path.join(dir, 'manifest.json');
  if (!existsSync(manifestFile)) throw new Error(`${dir} holds no cloud assembly (manifest.json); synthesize first`);
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
  const stacks: StackTemplate[] = [];
  const assetDirs = new Map<string, string>();
  let region = defaults.region;
  for (const [name, artifact] of Object.entries(manifest.artifacts ?? {})) {
    if (artifact.type === 'aws:cloudformation:stack' && artifact.properties?.templateFile) {
      const template = JSON.parse(readFileSync(path.join(dir, artifact.properties.templateFile), 'utf8')) as Template;
      stacks.push({ stackName: name, template });
      const envRegion = /^aws:\/\/[^/]+\/([a-z0-9-]+)$/.exec(artifact.environment ?? '')?.[1];
      if (envRegion && envRegion !== 'unknown-region') region = envRegion;
    }
    if (artifact.type === 'cdk:asset-manifest') {
      const file = path.join(dir, (artifact.properties as { file?: string } | undefined)?.file ?? '');
      if (!existsSync(file) || !file.endsWith('.json')) continue;
      const assets = JSON.parse(readFileSync(file, 'utf8')) as {
        files?: Record<string, { source: { path: string; packaging?: string } }>;
      };
      for (const [hash, asset] of Object.entries(assets.files ?? {})) {
        if (asset.source.packaging === 'zip') assetDirs.set(hash, path.join(dir, asset.source.path));
      }
    }
  }
  return { dir, stacks, assetDirs, region, account: defaults.account };
}

export function resourcesOfType(assembly: Assembly, type: string): Located[] {
  const found: Located[] = [];
  for (const { stackName, template } of assembly.stacks) {
    for (const [id, resource] of Object.entries(template.Resources))
      if (resource.Type === type) found.push({ stack: stackName, id, resource });
  }
  return found;
}

/** `stack/logicalId`, the key every map of the rehearsal uses. */
export const keyOf = (stack: string, id: string) => `${stack}/${id}`;
