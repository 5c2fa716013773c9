import type { Ability } from './key/abilities.ts';

/** The caller of an operation: the key, its store (and the store's currency) and what the key may do. */
export interface Principal {
  keyId: number;
  storeId: string;
  abilities: Ability[];
  currency: string | null;
  /** Only the MCP read tools for this key (docs/mcp.md#read-only-keys). */
  mcpReadOnly?: boolean;
  /** Present when the key has a write budget (docs/api.md#write-budget): per hour, null for no limit. */
  budget?: { writes: number | null; statusChanges: number | null };
}

/** What a write needs of its caller: external ids are scoped to the key, records to the store. */
export type Caller = Pick<Principal, 'keyId' | 'storeId'>;
