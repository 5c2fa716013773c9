import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  CALLED_LATER,
  DEFERRED_MODULES,
  deferIndexRequires,
  xraySdkForBundling,
  xraySdkPackage,
} from '#infra/xray-sdk.ts';

/**
 * infra/xray-sdk.ts: the X-Ray SDK's index as the signer bundles it. The copy's behaviour is
 * checked in a fresh node process, as the signer loads it: Powertools Tracer built as
 * functions/webhooks/tracing.ts builds it, in a Lambda environment, with a DynamoDB client handed
 * to it, resolving `aws-xray-sdk-core` to the copy.
 */
const index = readFileSync(join(xraySdkPackage(), 'dist', 'lib', 'aws-xray.js'), 'utf8');

describe('the X-Ray SDK index as bundled (infra/xray-sdk.ts)', () => {
  it('defers exactly the members that come from the patchers, plugins and SQL helpers the signer never runs', () => {
    expect(deferIndexRequires(index).deferred.sort()).toEqual(
      [
        'captureAWS',
        'captureAWSClient',
        'captureHTTPs',
        'captureHTTPsGlobal',
        'capturePromise',
        'database.SqlData',
        'plugins.EC2Plugin',
        'plugins.ECSPlugin',
        'plugins.ElasticBeanstalkPlugin',
      ].sort(),
    );
  });

  it('fails the build when a release stops requiring one of those modules there', () => {
    const reshaped = index.replace("require('./patchers/promise_p').capturePromise", 'undefined');
    expect(reshaped).not.toBe(index);
    expect(() => deferIndexRequires(reshaped)).toThrow(/no longer requires \.\/patchers\/promise_p/);
  });

  it("loads none of them with Tracer, keeps the SDK's members, and loads each at its first use", () => {
    const copy = xraySdkForBundling();
    const copyIndex = pathToFileURL(join(copy, 'dist', 'lib', 'index.js')).href;
    const hook = `export async function resolve(specifier, context, next) {
      return specifier === 'aws-xray-sdk-core' ? { url: ${JSON.stringify(copyIndex)}, shortCircuit: true } : next(specifier, context);
    }`;
    const script = `
      import { register, createRequire } from 'node:module';
      register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));
      const require = createRequire(import.meta.url);
      const loaded = () => Object.keys(require.cache).filter((f) => f.startsWith(${JSON.stringify(copy)}))
        .map((f) => './' + f.slice(${JSON.stringify(join(copy, 'dist', 'lib'))}.length + 1).replace(/\\.js$/, ''));
      const { Tracer } = await import('@aws-lambda-powertools/tracer');
      const tracer = new Tracer({ serviceName: 'test', captureHTTPsRequests: false });
      const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
      tracer.captureAWSv3Client(new DynamoDBClient({ region: 'eu-west-1' }));
      const atImport = loaded();
      const sdk = require(${JSON.stringify(join(copy, 'dist', 'lib', 'index.js'))});
      const original = require('aws-xray-sdk-core');
      const keys = (o) => Object.keys(o).sort();
      const sameKeys = ['', 'plugins', 'database'].every((k) =>
        JSON.stringify(keys(k ? sdk[k] : sdk)) === JSON.stringify(keys(k ? original[k] : original)));
      let customized = null;
      const v2Client = { customizeRequests: (fn) => { customized = typeof fn; } };
      const fakeHttp = { request() {}, get() {} };
      const forwarded = sdk.captureAWSClient(v2Client) === v2Client && customized === 'function' &&
        (sdk.captureHTTPsGlobal(fakeHttp), typeof fakeHttp.__request === 'function');
      const members = ['EC2Plugin', 'ECSPlugin', 'ElasticBeanstalkPlugin'].every((p) => sdk.plugins[p].originName === original.plugins[p].originName) &&
        typeof sdk.database.SqlData === 'function' && typeof sdk.capturePromise.patchThirdPartyPromise === 'function' &&
        sdk.Segment === (await import('aws-xray-sdk-core')).default.Segment;
      process.stdout.write(JSON.stringify({ atImport, sameKeys, forwarded, members, afterUse: loaded() }));
    `;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: { ...process.env, AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x', AWS_REGION: 'eu-west-1' },
    });
    expect(run.status, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as {
      atImport: string[];
      sameKeys: boolean;
      forwarded: boolean;
      members: boolean;
      afterUse: string[];
    };
    // Tracer ran on the copy: its index and the AWS SDK v3 patcher loaded, none of the deferred modules.
    expect(out.atImport).toEqual(expect.arrayContaining(['./index', './aws-xray', './patchers/aws3_p']));
    expect(out.atImport.filter((m) => (DEFERRED_MODULES as readonly string[]).includes(m))).toEqual([]);
    // The namespace has the SDK's members; the ones Tracer destructures forward their calls.
    expect(out.sameKeys).toBe(true);
    expect(CALLED_LATER.every((name) => deferIndexRequires(index).deferred.includes(name))).toBe(true);
    expect(out.forwarded).toBe(true);
    expect(out.members).toBe(true);
    expect(out.afterUse).toEqual(expect.arrayContaining([...DEFERRED_MODULES]));
  }, 60_000);
});
