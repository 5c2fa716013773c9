/**
 * The official MCP SDK as functions/mcp uses it (the low-level Server, the web-standard Streamable
 * HTTP transport, the request schemas), bundled as a Lambda is, with none of our code
 * (`npm run bench`, section bundles): what the MCP function cannot import in less time.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export const used = [Server, WebStandardStreamableHTTPServerTransport, CallToolRequestSchema, ListToolsRequestSchema];
