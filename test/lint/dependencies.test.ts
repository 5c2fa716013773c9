import { cruise, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The import rules of docs/architecture.md, checked by dependency-cruiser with the rules in
 * .dependency-cruiser.cjs (the same run as `npm run lint:deps`): every forbidden direction is a
 * rule, and a violation fails here naming the importing file, the imported one and the rule.
 */
const root = path.resolve(import.meta.dirname, '../..');
const SOURCE = ['bin', 'bench', 'emulation', 'functions', 'infra', 'scripts', 'shared'];
const described = (v: IViolation) => `${v.from} → ${v.to} (${v.rule.name})`;

async function cruiseSource(): Promise<ICruiseResult> {
  const options = await extractDepcruiseOptions(path.join(root, '.dependency-cruiser.cjs'));
  const tsConfig = extractTSConfig(path.join(root, 'tsconfig.json'));
  const out = await cruise(
    SOURCE.map((d) => path.join(root, d)),
    { ...options, baseDir: root, validate: true },
    {},
    { tsConfig },
  );
  return out.output as ICruiseResult;
}

describe('import rules (docs/architecture.md, .dependency-cruiser.cjs)', () => {
  it('every import of bin, bench, emulation, functions, infra, scripts and shared follows the rules', {
    timeout: 180_000,
  }, async () => {
    const result = await cruiseSource();
    // The cruise itself worked: it found the product and followed its imports.
    expect(result.modules.some((m) => m.source === 'shared/db/order/repo.ts')).toBe(true);
    expect(result.summary.totalCruised).toBeGreaterThan(250);
    expect(result.summary.violations.map(described)).toEqual([]);
  });
});
