import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A copy of a package's folder, changed by `change`, for esbuild to bundle in place of the
 * original (infra/bundling.ts aliases the package to it): infra/mcp-sdk.ts, infra/xray-sdk.ts and
 * infra/node-http.ts make theirs here. It lives under node_modules/.cache, so the copy's own imports resolve as the
 * original's do, and is named `name`-hash, the hash of `inputs` (the files the change reads and
 * the module that makes it), so a new release or a new transform makes a new copy. Made on first
 * use and reused after; written to a fresh folder and renamed into place, so two builds at once
 * (the tests synthesize in parallel) never see half a copy. Source maps and type declarations are
 * left out: esbuild reads neither.
 */
export function transformedCopy(options: {
  name: string;
  from: string;
  inputs: readonly string[];
  change: (copy: string) => void;
}): string {
  const hash = createHash('sha256');
  for (const input of options.inputs) hash.update(input);
  const cache = fileURLToPath(new URL('../node_modules/.cache', import.meta.url));
  const target = join(cache, `${options.name}-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(target)) return target;
  mkdirSync(cache, { recursive: true });
  const staging = mkdtempSync(`${target}.tmp-`);
  try {
    cpSync(options.from, staging, { recursive: true, filter: (path) => !/\.(map|d\.ts)$/.test(path) });
    options.change(staging);
    renameSync(staging, target);
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(target)) throw err;
  }
  return target;
}

/** The installed folder of package `pkg`: the nearest one above its entry whose package.json names it. */
export function packageFolder(pkg: string): string {
  let dir = dirname(createRequire(import.meta.url).resolve(pkg));
  while (!isPackage(dir, pkg)) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no folder of ${pkg} above its entry`);
    dir = parent;
  }
  return dir;
}

function isPackage(dir: string, pkg: string): boolean {
  const manifest = join(dir, 'package.json');
  return existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === pkg;
}
