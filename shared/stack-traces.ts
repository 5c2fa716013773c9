import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * Stack traces of a Lambda bundle at their place in the TypeScript sources, without parsing the
 * bundle's source map at every cold start. Node's `--enable-source-maps` parses the whole map as
 * the bundle loads: 7–16 ms of each function's import on Node 20, 9–24 ms on Node 22 (the MCP
 * function's 0.5 MB map the most), though most containers never print a stack. esbuild injects
 * this module into every bundle (infra/bundling.ts), and it reads the map beside the bundle the
 * first time a stack is formatted, then maps each frame of the bundle with Node's own SourceMap.
 * Frames elsewhere (Node, the runtime's AWS SDK) print as V8 prints them. Run from the sources
 * (tests, `npm start`) there is no bundle and no map, and nothing is installed.
 */

const bundleUrl = import.meta.url;
const bundlePath = fileURLToPath(bundleUrl);
let map: SourceMap | null | undefined;

function sourceMap(): SourceMap | null {
  if (map === undefined) {
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${bundlePath}.map`, 'utf8')));
    } catch {
      map = null;
    }
  }
  return map;
}

/** The original place of a call site in the bundle, or undefined for any other frame. */
function originOf(site: NodeJS.CallSite) {
  const file = site.getFileName();
  const line = site.getLineNumber();
  const column = site.getColumnNumber();
  if ((file !== bundleUrl && file !== bundlePath) || line === null || column === null) return undefined;
  const origin = sourceMap()?.findOrigin(line, column);
  return origin && 'fileName' in origin ? origin : undefined;
}

type Origin = NonNullable<ReturnType<typeof originOf>>;

function formatFrame(site: NodeJS.CallSite, origin: Origin | undefined, caller: Origin | undefined): string {
  if (!origin) return String(site);
  // A minified frame's function name is mangled; the caller's call expression names it as written.
  const name = caller?.name ?? site.getFunctionName();
  const where = `${origin.fileName.replace(/^(\.\.\/)+/, '')}:${origin.lineNumber}:${origin.columnNumber}`;
  return name ? `${name} (${where})` : where;
}

function header(error: unknown): string {
  try {
    return Error.prototype.toString.call(error);
  } catch {
    return 'Error';
  }
}

if (bundlePath.endsWith('.mjs') && existsSync(`${bundlePath}.map`)) {
  Error.prepareStackTrace = (error, sites) => {
    const origins = sites.map(originOf);
    return header(error) + sites.map((site, i) => `\n    at ${formatFrame(site, origins[i], origins[i + 1])}`).join('');
  };
}
