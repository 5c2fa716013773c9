/** Bundled in place of ajv-formats, for the same reason as ./ajv.ts: never called. */
export default function addFormatsNotBundled(): never {
  throw new Error(
    'ajv-formats is not bundled: pass the MCP Server a jsonSchemaValidator (functions/mcp/no-elicitation.ts)',
  );
}
