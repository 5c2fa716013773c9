import ipaddr from 'ipaddr.js';
import { isPublicIp } from '../net/public-address.ts';

/**
 * Where a webhook may connect (SSRF at delivery, docs/contract.md#webhooks): only public unicast addresses,
 * judged on what the resolver actually returned, because a public name can resolve to a private
 * address at any time (DNS rebinding). The local stack (ALLOW_PRIVATE_WEBHOOKS=1) also admits
 * loopback receivers, and nothing else: a developer's receiver runs on this machine, the rest of
 * a private network never needs to be reachable.
 */
export function isAllowedWebhookAddress(address: string, allowLoopback: boolean): boolean {
  if (isPublicIp(address)) return true;
  return allowLoopback && isLoopback(address);
}

function isLoopback(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (!ipaddr.isValid(bare)) return false;
  // process() turns ::ffff:127.0.0.1 into the IPv4 address it carries.
  return ipaddr.process(bare).range() === 'loopback';
}

/** Why an address was refused, for the delivery log. */
export const refusedAddressReason = (host: string, address: string) =>
  `refused: ${host} resolves to ${address}, which is not a public address`;
