/**
 * The public pages of the local stack, outside the key-checked routes: the OpenAPI document at
 * {base}/openapi.json (generated from the code on first request, with this server as its server
 * URL) and the API reference at {base}/docs, rendered by Redoc's standalone bundle served from
 * node_modules — no CDN, works offline.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { API_BASE_PATH } from '#http/api-routes.ts';
import { OPENAPI_DOCUMENT_PATH } from '#http/openapi/self.ts';

export const DOCS_PATH = '/docs';
export const REDOC_ASSET = 'redoc.standalone.js';

export interface PublicAnswer {
  status: number;
  contentType: string;
  body: string | Buffer;
}

/**
 * Redoc's side menu shows Redocly's logo from their CDN. The bundle is served with that address
 * emptied: an image without a source fails at once, Redoc then leaves it out, and the page loads
 * nothing from outside this server (test/integration/openapi-served.test.ts watches every request).
 */
const CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';

let redocBundle: Promise<string> | undefined;
const redoc = () =>
  (redocBundle ??= readFile(createRequire(import.meta.url).resolve(`redoc/bundles/${REDOC_ASSET}`), 'utf8').then(
    (bundle) => bundle.replaceAll(`"${CDN_LOGO}"`, '""'),
  ));

let documents = new Map<string, string>();

async function openApiJson(baseUrl: string): Promise<string> {
  if (!documents.has(baseUrl)) {
    const { buildOpenApiDocument } = await import('#http/openapi/document.ts');
    if (documents.size > 8) documents = new Map();
    documents.set(baseUrl, JSON.stringify(buildOpenApiDocument({ serverUrl: baseUrl }), null, 2));
  }
  return documents.get(baseUrl)!;
}

export function referencePage(): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Store integration API reference</title>
  <style>body { margin: 0; padding: 0; }</style>
</head>
<body>
  <redoc spec-url="${API_BASE_PATH}${OPENAPI_DOCUMENT_PATH}" hide-download-button="false"></redoc>
  <script src="${API_BASE_PATH}${DOCS_PATH}/${REDOC_ASSET}"></script>
</body>
</html>
`;
}

/** The answer for a public path, or undefined when the path is not one of them. */
export async function publicRoute(
  method: string,
  pathname: string,
  baseUrl: string,
): Promise<PublicAnswer | undefined> {
  if (method !== 'GET') return undefined;
  switch (pathname) {
    case API_BASE_PATH + OPENAPI_DOCUMENT_PATH:
      return { status: 200, contentType: 'application/json', body: await openApiJson(baseUrl) };
    case API_BASE_PATH + DOCS_PATH:
      return { status: 200, contentType: 'text/html; charset=utf-8', body: referencePage() };
    case `${API_BASE_PATH}${DOCS_PATH}/${REDOC_ASSET}`:
      return { status: 200, contentType: 'text/javascript; charset=utf-8', body: await redoc() };
    default:
      return undefined;
  }
}
