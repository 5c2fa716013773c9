/**
 * The public-address policy: whether a URL, host name or IP address points at the public
 * internet. Image URLs (`image_url`, stored and handed to consumers who fetch them) and webhook
 * URLs (which we POST to) both must, so that nothing can point a fetcher at our own network
 * (SSRF). Static checks only, no I/O; `field` names the input in every refusal reason.
 *
 * Policy (checkPublicHttpsUrl):
 * - Only the WHATWG `URL` parser is trusted, and every decision is taken on its normalized
 *   output (`url.hostname`, `url.port`, ...), never on the raw string: the raw string has
 *   dozens of spellings for the same host (`0x7f.1`, `2130706433`, `①②⑦.⓪.⓪.①`, `%6c...`,
 *   `LOCALHOST`), the normalized one has exactly one. Callers must store `result.url`, not
 *   the input, so that what was checked is what gets fetched.
 * - Scheme https only; no credentials; no explicit port (443 is normalized away by the parser,
 *   so it is accepted; webhook URLs, which may name any port, are checked without theirs).
 * - IP-literal hosts are refused entirely, public ones included. A catalog image or a webhook
 *   receiver on a raw IP is not a real-world need (and rarely has a publicly trusted
 *   certificate), and a flat refusal leaves no encoding for an attacker to find a hole in.
 *   Non-public and public literals get different reasons only to make the error message useful.
 * - Hosts that name internal infrastructure are refused: localhost, single-label names,
 *   internal suffixes, reverse-DNS zones, cloud metadata names, and a few wildcard DNS
 *   services whose names exist only to map to arbitrary (usually loopback) IPs.
 * - A trailing-dot host is classified without its dot (so `localhost.` is still localhost)
 *   and is then refused anyway: the stored URL should be canonical, and `example.com.` is
 *   handled inconsistently by TLS name checks and CDN virtual hosting.
 *
 * What this cannot catch: a public name whose DNS answer is private (`localtest.me`-style
 * names not on the list, `*.nip.io` clones, DNS rebinding). Whatever fetches the URL must
 * resolve it and check each resolved address with `isPublicIp` at connect time.
 */
import ipaddr from 'ipaddr.js';

export type UrlCheck = { ok: true; url: string } | { ok: false; reason: string };

const MAX_LENGTH = 2048;

/** Why a URL is refused; each reason follows the field name (`image_url host is localhost`). */
const REASON = {
  tooLong: `must be at most ${MAX_LENGTH} characters`,
  controlChars: 'must not contain control characters',
  notAbsolute: 'must be an absolute URL',
  scheme: 'must use https',
  credentials: 'must not contain a username or password',
  port: 'must not specify a port other than 443',
  publicIp: 'host must be a domain name, not an IP address',
  nonPublicIp: 'host is a non-public IP address',
  invalidHost: 'host is not a valid domain name',
  localhost: 'host is localhost',
  metadata: 'host is a cloud metadata service',
  singleLabel: 'host must be a fully qualified public domain name',
  internal: 'host is an internal or special-use name',
  wildcardDns: 'host is a wildcard DNS service that maps names to IP addresses',
  trailingDot: 'host must not end with a dot',
} as const;

type Refusal = keyof typeof REASON;

// Names providers resolve, from inside an instance, to the instance metadata service.
// Subdomains are refused too; nobody serves images or receives webhooks under them.
const METADATA_NAMES = [
  'metadata',
  'instance-data',
  'metadata.google.internal',
  'instance-data.ec2.internal',
  'metadata.azure.com',
  'metadata.azure.internal',
  'metadata.tencentyun.com',
  'metadata.platformequinix.com',
  'metadata.packet.net',
  'api.metadata.cloud.ibm.com',
  'kubernetes.default',
];

// Suffixes that only ever resolve on private networks (mDNS, home routers, corporate split
// DNS, container runtimes, Kubernetes). `arpa` covers in-addr.arpa, ip6.arpa and home.arpa.
// Public-but-unresolvable special names (.example, .test, .invalid) are deliberately not
// here: they cannot reach anything internal, and test fixtures use them.
const INTERNAL_SUFFIXES = [
  'local',
  'localdomain',
  'internal',
  'intranet',
  'lan',
  'home',
  'corp',
  'private',
  'svc',
  'arpa',
];

// Public domains that exist to answer with loopback or with whatever IP is spelled in the
// name. Listing them is a courtesy that stops the copy-paste payloads; it is not the defence
// (see the connect-time check in the module comment).
const WILDCARD_DNS_SUFFIXES = ['localtest.me', 'lvh.me', 'vcap.me', 'nip.io', 'sslip.io', 'xip.io'];

// LDH plus underscore (seen on real CDN hosts); the WHATWG parser lets through characters
// like `$`, `*` and `{` that no DNS name can contain, so they are refused here.
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
// A TLD is alphabetic or an IDN A-label; this also keeps numeric last labels (IPv4 spellings)
// out if a caller hands us a hostname the WHATWG parser never saw.
const TLD = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;
const MAX_HOSTNAME_LENGTH = 253;

// Tab, CR and LF are silently removed by the WHATWG parser; any other consumer of the raw
// string may not agree, so they are refused instead of normalized.
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/** The URL policy of the module comment; `field` (e.g. `image_url`) starts every reason. */
export function checkPublicHttpsUrl(input: string, field: string): UrlCheck {
  const refuse = (refusal: Refusal): UrlCheck => ({ ok: false, reason: `${field} ${REASON[refusal]}` });
  // Runtime guard: callers may pass unvalidated JSON values despite the signature.
  if (typeof input !== 'string') return refuse('notAbsolute');
  // Before parsing, so a multi-megabyte payload costs nothing.
  if (input.length > MAX_LENGTH) return refuse('tooLong');
  if (CONTROL_CHARS.test(input)) return refuse('controlChars');

  let url: URL;
  try {
    // No base: a relative reference must not silently become one of our own URLs.
    url = new URL(input);
  } catch {
    return refuse('notAbsolute');
  }

  if (url.protocol !== 'https:') return refuse('scheme');
  if (url.username !== '' || url.password !== '') return refuse('credentials');
  if (url.port !== '') return refuse('port');

  const hostRefusal = classifyHost(url.hostname);
  if (hostRefusal !== null) return refuse(hostRefusal);
  if (url.hostname.endsWith('.')) return refuse('trailingDot');

  // Percent-encoding and IDNA can make the normalized form longer than the input.
  if (url.href.length > MAX_LENGTH) return refuse('tooLong');
  return { ok: true, url: url.href };
}

/**
 * True when `hostname` may not be the host of a public URL: any IP literal, localhost, internal
 * or special-use names, metadata names, malformed names. Expects a WHATWG-normalized
 * hostname (`url.hostname`); anything not already in that form (non-ASCII, odd characters)
 * is treated as forbidden rather than guessed at.
 */
export function isForbiddenHostname(hostname: string): boolean {
  return classifyHost(hostname) !== null;
}

/**
 * True only for a public unicast address. Transition forms that embed an IPv4 address
 * (IPv4-mapped, IPv4-translated, NAT64 64:ff9b::/96, 6to4, Teredo) are judged by the embedded
 * address, because that is where the packets end up. Meant for addresses a resolver returned,
 * so only canonical spellings are accepted (dotted-quad IPv4 without leading zeros, standard
 * IPv6, optionally in brackets): a loose form like `0177.1` is ambiguous across parsers and
 * is answered with false.
 */
export function isPublicIp(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return isPublicV4(ipaddr.IPv4.parse(bare));
  // A zone id only makes sense for link-local scopes, and which interface it names is host
  // state we cannot see.
  if (bare.includes('%')) return false;
  const hex = withHexTail(bare);
  if (hex === null || !ipaddr.IPv6.isValid(hex)) return false;
  return isPublicV6(ipaddr.IPv6.parse(hex));
}

// ipaddr.js reads `::a.b.c.d` as the mapped `::ffff:a.b.c.d` and accepts hex and
// leading-zero octets in a dotted tail, while inet_pton (what actually connects) reads it as
// the IPv4-compatible `::a.b:c.d` and accepts only plain decimal. Rewriting the tail to hex
// ourselves makes ipaddr.js see the same address the socket would.
function withHexTail(address: string): string | null {
  const cut = address.lastIndexOf(':') + 1;
  const tail = address.slice(cut);
  if (!tail.includes('.')) return address;
  if (!ipaddr.IPv4.isValidFourPartDecimal(tail)) return null;
  const bytes = ipaddr.IPv4.parse(tail).toByteArray();
  const group = (i: number): string => (((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16);
  return `${address.slice(0, cut)}${group(0)}:${group(2)}`;
}

function isPublicV4(address: ipaddr.IPv4): boolean {
  return address.range() === 'unicast';
}

/** 64:ff9b::/96, built from its parts: parsing it at import ran ipaddr's parser for the first time in every function that loads this module (~0.8 ms of a cold start). */
const NAT64_WELL_KNOWN = new ipaddr.IPv6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0]);

function isPublicV6(address: ipaddr.IPv6): boolean {
  const p = (i: number): number => address.parts[i] ?? 0;
  switch (address.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return isPublicV4(v4FromParts(p(6), p(7)));
    case 'rfc6052':
      // 64:ff9b:1::/48 is the local-use NAT64 prefix (RFC 8215): its translator is ours by
      // definition and where it puts the IPv4 bits depends on local configuration.
      return address.match(NAT64_WELL_KNOWN, 96) && isPublicV4(v4FromParts(p(6), p(7)));
    case '6to4':
      return isPublicV4(v4FromParts(p(1), p(2)));
    case 'teredo':
      // Both the relay server and the (bit-inverted) client address carry traffic.
      return isPublicV4(v4FromParts(p(2), p(3))) && isPublicV4(v4FromParts(~p(6) & 0xffff, ~p(7) & 0xffff));
    case 'unicast':
      // ipaddr.js calls everything it has no special range for "unicast", including
      // IPv4-compatible ::a.b.c.d (deprecated, never returned by a resolver) and unallocated
      // space; only 2000::/3 is actually handed out as global unicast.
      return (p(0) & 0xe000) === 0x2000;
    default:
      return false;
  }
}

function v4FromParts(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

function classifyHost(hostname: string): Refusal | null {
  const host = hostname.toLowerCase();

  if (host.startsWith('[') || host.includes(':')) {
    const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
    if (!ipaddr.IPv6.isValid(bare)) return 'invalidHost';
    return isPublicIp(bare) ? 'publicIp' : 'nonPublicIp';
  }

  // One trailing dot is the DNS root and names the same host; more is malformed.
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name === '' || name.length > MAX_HOSTNAME_LENGTH) return 'invalidHost';

  // The WHATWG parser already turned every IPv4 spelling into dotted-quad; the loose parse
  // covers callers that hand us a hostname it never saw.
  if (ipaddr.IPv4.isValid(name)) {
    return isPublicIp(ipaddr.IPv4.parse(name).toString()) ? 'publicIp' : 'nonPublicIp';
  }

  const labels = name.split('.');
  if (!labels.every((label) => LABEL.test(label))) return 'invalidHost';

  if (matchesSuffix(name, ['localhost'])) return 'localhost';
  if (matchesSuffix(name, METADATA_NAMES)) return 'metadata';
  if (labels.length < 2) return 'singleLabel';
  if (!TLD.test(labels[labels.length - 1] ?? '')) return 'invalidHost';
  if (matchesSuffix(name, INTERNAL_SUFFIXES)) return 'internal';
  if (matchesSuffix(name, WILDCARD_DNS_SUFFIXES)) return 'wildcardDns';
  return null;
}

function matchesSuffix(name: string, suffixes: readonly string[]): boolean {
  return suffixes.some((suffix) => name === suffix || name.endsWith(`.${suffix}`));
}
