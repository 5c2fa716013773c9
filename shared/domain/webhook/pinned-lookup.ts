import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isAllowedWebhookAddress, refusedAddressReason } from './address-policy.ts';

/**
 * The connect-time half of the public-address rule, shared by the webhook signer
 * (functions/webhooks/post.ts) and the OAuth client-metadata fetch (functions/oauth/client-metadata.ts).
 */
export class RefusedAddress extends Error {
  readonly code = 'EWEBHOOKREFUSED';
}

/**
 * A DNS lookup that refuses the whole answer when any address is not allowed, and otherwise
 * hands the socket exactly the addresses it checked: the connection goes where the check looked
 * (no second resolution for a rebinding DNS server to answer differently).
 */
export function pinnedLookup(allowLoopback: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(
      hostname,
      { family: options.family, hints: options.hints, all: true },
      (err, addresses: LookupAddress[]) => {
        if (err) return callback(err, '', 0);
        const refused = addresses.find((a) => !isAllowedWebhookAddress(a.address, allowLoopback));
        if (refused || addresses.length === 0) {
          return callback(new RefusedAddress(refusedAddressReason(hostname, refused?.address ?? 'nothing')), '', 0);
        }
        if ((options as { all?: boolean }).all)
          return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        const first = addresses[0] as LookupAddress;
        callback(null, first.address, first.family);
      },
    );
  };
}
