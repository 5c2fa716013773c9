import type { Ability } from './key/abilities.ts';

/** The caller of an operation: the key, its store (and the store's currency) and what the key may do. */
export interface Principal {
  keyId: number;
  storeId: string;
  abilities: Ability[];
  currency: string | null;
  /** Only the MCP read tools for this key (docs/mcp.md#read-only-keys). */
  mcpReadOnly?: boolean;
}

/** What a write needs of its caller: external ids are scoped to the key, records to the store. */
export type Caller = Pick<Principal, 'keyId' | 'storeId'>;
