/**
 * Bundled in place of ajv (infra/bundling.ts). The MCP SDK's Server builds its default JSON Schema
 * validator with ajv only when no `jsonSchemaValidator` is passed; ours passes one
 * (functions/mcp/no-elicitation.ts), so this class is never constructed.
 */
export default class AjvNotBundled {
  constructor() {
    throw new Error('ajv is not bundled: pass the MCP Server a jsonSchemaValidator (functions/mcp/no-elicitation.ts)');
  }
}
