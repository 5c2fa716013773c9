import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { requireHttpBuiltins, tracerForBundling, tracerProvider } from '#infra/node-http.ts';

/** infra/node-http.ts: node:http and node:https required, not imported, in Tracer's provider as bundled. */
describe('node:http through require (infra/node-http.ts)', () => {
  it('turns the default imports of node:http and node:https into requires, and leaves other imports alone', () => {
    const source = [
      "import xraySdk from 'aws-xray-sdk-core';",
      "import http from 'node:http';",
      "import https from 'node:https';",
      "import { subscribe } from 'node:diagnostics_channel';",
      'export const both = [http, https, xraySdk, subscribe];',
    ].join('\n');
    const { code, replaced } = requireHttpBuiltins(source);
    expect(replaced).toEqual(['node:http', 'node:https']);
    expect(code).not.toMatch(/from 'node:https?'/);
    expect(code).toContain('const http = __requireBuiltin("node:http");');
    expect(code).toContain("import xraySdk from 'aws-xray-sdk-core';");
    expect(requireHttpBuiltins("import fs from 'node:fs';\n").replaced).toEqual([]);
  });

  it("gives the bundles a Tracer whose provider requires them, and the module it requires is node's own", async () => {
    const entry = tracerForBundling();
    const provider = readFileSync(join(dirname(entry), 'provider', 'ProviderService.js'), 'utf8');
    expect(provider).not.toMatch(/from 'node:https?'/);
    expect(provider).toMatch(/const http = __requireBuiltin\("node:http"\)/);
    // The rewritten module still loads and builds a Tracer (this process is no Lambda: tracing off).
    const { Tracer } = (await import(pathToFileURL(entry).href)) as typeof import('@aws-lambda-powertools/tracer');
    expect(new Tracer({ serviceName: 'test', captureHTTPsRequests: false }).isTracingEnabled()).toBe(false);
  });

  it('fails the build when a release of Tracer no longer imports both there', () => {
    const provider = readFileSync(join(dirname(tracerForBundling()), 'provider', 'ProviderService.js'), 'utf8');
    expect(() => tracerProvider("import http from 'node:http';\nexport default http;\n")).toThrow(
      /imports node:http; update infra\/node-http.ts/,
    );
    expect(() => tracerProvider('export {};\n')).toThrow(/neither node:http nor node:https/);
    // The copy's provider is already rewritten: nothing left to turn into a require.
    expect(() => tracerProvider(provider)).toThrow(/neither/);
  });
});
