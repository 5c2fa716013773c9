import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { baseUrl, client, storeWithKey } from '#fixtures/api.ts';

/**
 * The rehearsal's API Gateway, driven by the synthesized templates alone, on the points where a
 * deploy differs from the local gateway: the OpenAPI method, ANY methods (the request's own verb
 * reaches the Lambda), bodies under the API's binary media types (base64 to the Lambda), and
 * the body size API Gateway and Lambda let through. What API Gateway does is in docs/rehearsal.md.
 */
const committed = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8')) as {
  paths: Record<string, unknown>;
};

/**
 * Big bodies on a connection of their own: a pooled keep-alive socket the server has just timed
 * out would fail the write (EPIPE) on a busy machine, which is not what these tests are about.
 */
function send(
  method: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer | string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${baseUrl()}${path}`,
      { method, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('rehearsal: API Gateway as the templates configure it', () => {
  it('serves the OpenAPI document at /openapi.json, without a key', async () => {
    const res = await fetch(`${baseUrl()}/openapi.json`);
    const text = await res.text();
    expect(res.status, text.slice(0, 300)).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const doc = JSON.parse(text) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths).sort()).toEqual(Object.keys(committed.paths).sort());
  });

  it('answers DELETE on a GET route with 405 and Allow, from the handler that saw the real method', async () => {
    const res = await client(null, { undocumented: true }).request('DELETE', '/products');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    // The message names the verb the Lambda got in `httpMethod`: DELETE, not the method's "ANY".
    expect(res.body).toEqual({
      code: 'method_not_allowed',
      message: expect.stringContaining('DELETE is not allowed'),
      field: null,
    });
  });

  it('answers every unknown verb of a known path the same way (PATCH on a POST route, with a key)', async () => {
    const { key } = await storeWithKey(['orders:write-status']);
    const res = await client(key.token, { undocumented: true }).request('PATCH', '/orders/ORD-1/status', {
      status: 'shipped',
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(res.body.message).toContain('PATCH is not allowed');
  });

  it('hands a JSON body to the Lambda as its bytes: non-ASCII text arrives intact', async () => {
    const { client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const name = 'Café ☕ Größe – 日本';
    const put = await api.put('/catalog/products/b64-roundtrip', { name, price: 1250 });
    expect(put.status, put.text).toBe(200);
    expect(put.body.data.name).toBe(name);
    const listed = await api.get('/products');
    expect(listed.body.data.map((p: { name: string }) => p.name)).toContain(name);
  });

  it('hands invalid UTF-8 to the Lambda unchanged, which refuses it (a text passthrough would have turned it into U+FFFD)', async () => {
    const { key } = await storeWithKey(['catalog:write']);
    const bytes = Buffer.concat([
      Buffer.from('{"name":"bad '),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('","price":100}'),
    ]);
    const res = await send(
      'PUT',
      '/catalog/products/bad-utf8',
      { authorization: `Bearer ${key.token}`, 'content-type': 'application/json' },
      bytes,
    );
    expect(res.status, res.text).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({ code: 'invalid_json', message: expect.stringContaining('UTF-8') });
  });

  it('answers a 5 MB body with 413 payload_too_large', async () => {
    const { key } = await storeWithKey(['catalog:write']);
    const body = JSON.stringify({ name: 'x'.repeat(5 * 1024 * 1024), price: 100 });
    const res = await send(
      'PUT',
      '/catalog/products/too-big',
      { authorization: `Bearer ${key.token}`, 'content-type': 'application/json' },
      body,
    );
    expect(res.status, res.text.slice(0, 300)).toBe(413);
    expect(res.headers['content-type']).toContain('application/json');
    expect(JSON.parse(res.text)).toMatchObject({ code: 'payload_too_large', field: null });
  });

  it("answers a body over API Gateway's 10 MB limit with its REQUEST_TOO_LARGE response (413)", async () => {
    const res = await send(
      'PUT',
      '/catalog/products/far-too-big',
      { 'content-type': 'application/json' },
      'x'.repeat(10 * 1024 * 1024 + 1),
    );
    expect(res.status).toBe(413);
    expect(JSON.parse(res.text)).toMatchObject({ code: 'payload_too_large' });
  });
});
