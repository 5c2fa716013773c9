import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LAMBDA_BUNDLING } from '#infra/bundling.ts';
import { synthStacks } from './synth.ts';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  engines: { node: string };
  devDependencies: Record<string, string>;
  optionalDependencies: Record<string, string>;
};
const major = (version: string) => Number(/(\d+)/.exec(version)?.[1]);

/**
 * The Lambdas' runtime is the one fact; the Node that runs the local stack, the tests and CI follows
 * it (docs/local.md#node). The stack, the admin CLI and every child a test starts run on
 * `process.execPath` or on the `node` that npm puts first on PATH: the same binary as this file's.
 */
describe('the Node the project runs on locally', () => {
  const runtimes = new Set(
    Object.values(synthStacks().template.findResources('AWS::Lambda::Function'))
      .map((f) => f.Properties.Runtime as string | undefined)
      .filter((r): r is string => r?.startsWith('nodejs') === true),
  );

  it('is one Node major for every function', () => {
    expect([...runtimes]).toEqual([expect.stringMatching(/^nodejs\d+\.x$/)]);
  });

  it("runs this test on the functions' major (the node npm installs from the registry)", () => {
    const lambda = major([...runtimes][0]!);
    expect(
      major(process.versions.node),
      `this runs on ${process.execPath} (${process.version}); run it through npm (npm test, npx vitest), whose PATH starts with node_modules/.bin/node`,
    ).toBe(lambda);
  });

  it("pins the installed node, @types/node, engines and the bundles' target to that major", () => {
    const lambda = major([...runtimes][0]!);
    const nodePackages = Object.entries(pkg.optionalDependencies).filter(([name]) =>
      /^node-(linux|darwin)-/.test(name),
    );
    expect(nodePackages.length).toBeGreaterThan(0);
    for (const [, range] of nodePackages) expect(range).toMatch(new RegExp(`^\\^${lambda}\\.`));
    expect(pkg.devDependencies['@types/node']).toMatch(new RegExp(`^\\^${lambda}\\.`));
    expect(pkg.engines.node).toBe(`>=${lambda}`);
    expect(LAMBDA_BUNDLING.target).toBe(`node${lambda}`);
  });
});
