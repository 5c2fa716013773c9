import type { Duplex } from 'node:stream';
import { GATEWAY_RESPONSES } from '#http/gateway-responses.ts';

/**
 * The answer to a request Node's parser refuses before any handler sees it: a malformed request
 * line or header, or headers past Node's limit. Node's own answer is an empty 400 or 431; the
 * API's clients get its JSON error body instead, `bad_request` as API Gateway's own refusals
 * are (docs/api.md, "The local stack"), and the connection is closed, since the parser's state is lost.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    return;
  }
  const message =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? 'The request headers are larger than the API accepts.'
      : 'The request is not valid HTTP/1.1.';
  const body = JSON.stringify({ ...GATEWAY_RESPONSES.badRequest, message });
  socket.end(
    `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
