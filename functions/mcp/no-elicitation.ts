import type { jsonSchemaValidator } from '@modelcontextprotocol/server';

/**
 * The MCP Server's JSON Schema validator. The SDK's Server uses it for one thing: checking what a
 * client answers to an elicitation (the server asking the user for input). This server never
 * elicits, so it needs none; passing this one keeps the SDK from building its ajv default, which
 * lets the Lambda bundle leave ajv out (infra/bundling.ts).
 */
export const NO_ELICITATION: jsonSchemaValidator = {
  getValidator() {
    throw new Error('this server sends no elicitation requests, so it validates no elicitation answers');
  },
};
