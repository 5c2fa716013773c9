import process from 'node:process';

/**
 * Bundled in place of `@modelcontextprotocol/server/_shims` (infra/bundling.ts). The SDK's Node
 * shim is its own copy of ajv (151 KiB of the MCP bundle; its import time: infra/bundling.ts),
 * which Server and McpServer construct only when no `jsonSchemaValidator` is passed; ours passes
 * one (functions/mcp/no-elicitation.ts), so this class is never constructed.
 */
export class DefaultJsonSchemaValidator {
  constructor() {
    throw new Error('ajv is not bundled: pass the MCP Server a jsonSchemaValidator (functions/mcp/no-elicitation.ts)');
  }
}

export { process };
