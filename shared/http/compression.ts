/**
 * Answers of at least this many bytes are gzipped when the client accepts it: API Gateway's
 * minimumCompressionSize on the REST API (infra/api-stack.ts), and the local gateway does the same
 * (emulation/local/gateway.ts). A list page of 50 orders is ~20 KB of JSON and ~3 KB gzipped: data
 * transfer out is paid by the byte (docs/performance.md). Below 1 KB gzip saves little and costs
 * the client a decoder.
 */
export const MIN_COMPRESSION_BYTES = 1024;
