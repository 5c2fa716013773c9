/**
 * The official MCP SDK as functions/mcp uses it (the low-level Server, the SDK's entry for
 * 2026-07-28 requests, its predicate for 2025 ones and the web-standard Streamable HTTP transport
 * that answers those), bundled as a Lambda is, with none of our code (`npm run bench`, section
 * bundles): what the MCP function cannot import in less time.
 */
import {
  createMcpHandler,
  isLegacyRequest,
  Server,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';

export const used = [createMcpHandler, isLegacyRequest, Server, WebStandardStreamableHTTPServerTransport];
