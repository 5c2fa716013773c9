import type { EventType } from '../event/event.ts';
import type { Ability } from './abilities.ts';

export const MCP_MODES = ['full', 'read-only'] as const;
export type McpMode = (typeof MCP_MODES)[number];

export interface ApiKey {
  id: number;
  store_id: string;
  name: string;
  abilities: Ability[];
  status: 'active' | 'revoked';
  webhook_url: string | null;
  /** The events its webhook receives (default all order events). */
  events: EventType[];
  /** Whether its webhook skips the events this key caused itself (`--exclude-own`). */
  exclude_own: boolean;
  /** `read-only`: the MCP server offers this key only its read tools, whatever its abilities (docs/mcp.md#read-only-keys). */
  mcp: McpMode;
  /** Write requests per hour (docs/api.md#write-budget); null: no budget. */
  writes_per_hour: number | null;
  /** Order status changes per hour; null: no budget. */
  status_changes_per_hour: number | null;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

/** The key record with its secrets, for the webhook path and the admin handler only. */
export interface KeyRecord extends ApiKey {
  token_hash: string;
  webhook_secret: string;
  previous_webhook_secret: string | null;
  previous_webhook_secret_expires_at: string | null;
}

export function publicKey(record: KeyRecord): ApiKey {
  const {
    token_hash: _h,
    webhook_secret: _s,
    previous_webhook_secret: _p,
    previous_webhook_secret_expires_at: _e,
    ...rest
  } = record;
  return rest;
}
