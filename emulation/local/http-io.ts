import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { MIN_COMPRESSION_BYTES } from '#http/compression.ts';

// Reading a request body and writing an answer as API Gateway does, for the local gateway and the rehearsal's.
const GATEWAY_BODY_LIMIT = 10 * 1024 * 1024; // API Gateway's own payload limit
/** A body past the limit is read and dropped up to here, so the client sees the 413; beyond it the socket is cut. */
const DRAIN_LIMIT = 4 * GATEWAY_BODY_LIMIT;

/**
 * The body, or 'too_large' once it passes the limit. The rest of a too-large body is still read
 * (and dropped): a client still sending would otherwise get a reset instead of the 413.
 */
export async function readBody(req: IncomingMessage): Promise<Buffer | 'too_large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > DRAIN_LIMIT) break;
    if (size <= GATEWAY_BODY_LIMIT) chunks.push(chunk as Buffer);
  }
  return size > GATEWAY_BODY_LIMIT ? 'too_large' : Buffer.concat(chunks);
}

function acceptsGzip(req: IncomingMessage | undefined): boolean {
  if (!req || req.method === 'HEAD') return false;
  const accept = String(req.headers['accept-encoding'] ?? '');
  return /(^|,)\s*(gzip|\*)\s*(,|;(?!\s*q=0(\.0*)?\s*(,|$))|$)/i.test(accept);
}

export function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  let text: string | Buffer = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  // Header names are case-insensitive: the Lambda's own spelling wins over the defaults, once.
  res.setHeader('Content-Type', 'application/json');
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  // As API Gateway's minimumCompressionSize does (shared/http/compression.ts).
  if (acceptsGzip(res.req) && !res.hasHeader('Content-Encoding') && Buffer.byteLength(text) >= MIN_COMPRESSION_BYTES) {
    text = gzipSync(text);
    res.setHeader('Content-Encoding', 'gzip');
    res.setHeader('Vary', 'Accept-Encoding');
  }
  // HEAD: the length GET's body would have (the handler says so), never the empty body's 0.
  if (res.req?.method !== 'HEAD' || !res.hasHeader('Content-Length'))
    res.setHeader('Content-Length', Buffer.byteLength(text));
  res.writeHead(status);
  res.end(text);
}
