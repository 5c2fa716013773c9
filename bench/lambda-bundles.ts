import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

type Template = {
  Resources: Record<
    string,
    {
      Type: string;
      Properties?: { Handler?: string; Environment?: { Variables?: Record<string, unknown> } };
      Metadata?: Record<string, string>;
    }
  >;
};

/**
 * The Lambda functions of every stack synthesized into `outDir` (a cloud assembly such as
 * cdk.out): logical id without its hash, and the bundle file its handler loads (not the separate
 * source map beside it), and the NODE_OPTIONS the function runs with (`--enable-source-maps`
 * would make node read and parse that map when the bundle loads; the functions do without it,
 * see shared/stack-traces.ts).
 */
export function lambdaBundles(outDir: string): Array<{ fn: string; file: string; nodeOptions: string }> {
  const found: Array<{ fn: string; file: string; nodeOptions: string }> = [];
  for (const name of readdirSync(outDir).filter((f) => f.endsWith('.template.json'))) {
    const template = JSON.parse(readFileSync(join(outDir, name), 'utf8')) as Template;
    for (const [id, resource] of Object.entries(template.Resources)) {
      const asset = resource.Metadata?.['aws:asset:path'];
      if (resource.Type !== 'AWS::Lambda::Function' || !asset) continue;
      const module = (resource.Properties?.Handler ?? 'index.handler').split('.')[0];
      const file = ['.mjs', '.js'].map((ext) => join(outDir, asset, `${module}${ext}`)).find(existsSync);
      const nodeOptions = resource.Properties?.Environment?.Variables?.NODE_OPTIONS;
      if (file)
        found.push({
          fn: id.replace(/[0-9A-F]{8}$/, ''),
          file,
          nodeOptions: typeof nodeOptions === 'string' ? nodeOptions : '',
        });
    }
  }
  return found;
}
