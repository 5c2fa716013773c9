/**
 * `npm run openapi`: writes docs/openapi.json and docs/errors.md from the code (route table,
 * valibot schemas, error catalogue). A test fails while either is stale.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildOpenApiDocument } from '../shared/http/openapi/document.ts';
import { errorCatalogueMarkdown } from '../shared/http/openapi/error-catalogue-md.ts';

export const OPENAPI_FILE = 'docs/openapi.json';
export const ERRORS_FILE = 'docs/errors.md';
export const renderOpenApi = () => JSON.stringify(buildOpenApiDocument(), null, 2) + '\n';

const root = path.resolve(import.meta.dirname, '..');
if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  writeFileSync(path.join(root, OPENAPI_FILE), renderOpenApi());
  writeFileSync(path.join(root, ERRORS_FILE), errorCatalogueMarkdown());
  process.stdout.write(`wrote ${OPENAPI_FILE} and ${ERRORS_FILE}\n`);
}
