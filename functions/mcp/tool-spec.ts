import type { Refused } from '#domain/outcome.ts';
import type * as v from 'valibot';
import type { ResponseBody } from '#http/openapi/resources.ts';
import type { Args } from './args.ts';
import type { ToolSchemas } from './tool-schemas.ts';
import type { ToolOperation } from './operations.ts';

/** The endpoint request a tool's arguments become. */
export interface ToolRequest {
  /** As API Gateway passes them: still URL-encoded. */
  pathParameters?: Record<string, string>;
  query?: Record<string, string>;
  body?: Args;
  /** Sent as the Idempotency-Key header. */
  idempotencyKey?: string;
  /** Answer what the write would do, writing nothing (docs/mcp.md#dry-runs). */
  dryRun?: boolean;
}

/** The shape of a tool (tools.ts holds them all). */
export interface ToolSpec {
  name: string;
  title: string;
  description: string;
  /** The arguments other than `idempotency_key` and, on writes, `dry_run`. */
  args: v.ObjectSchema<v.ObjectEntries, undefined> | v.StrictObjectSchema<v.ObjectEntries, undefined>;
  /** Takes a required `idempotency_key` argument, sent as the Idempotency-Key header. */
  idempotent?: boolean;
  request: (args: Args) => ToolRequest;
  /** Route error fields that a tool caller knows under another name (`filter[name]` → `filter_name`). */
  fieldNames?: Record<string, string>;
  /** The endpoint's response document (its outputSchema and untrusted fields). */
  output: ResponseBody;
  /** What the input schema shows when it can say more than the validating schema converts to (enums, typed items). */
  shown?: v.ObjectSchema<v.ObjectEntries, undefined> | v.StrictObjectSchema<v.ObjectEntries, undefined>;
}

export interface ToolDefinition extends Omit<ToolSpec, 'request'> {
  operation: ToolOperation;
  /** Its input and output JSON Schemas, as tools/list shows them (converted once, at the first call). */
  schemas: () => Promise<ToolSchemas>;
  /** Validates the arguments and builds the endpoint's request, or refuses them (422 naming the argument). */
  toRequest: (args: Args) => ToolRequest | Refused;
}
