import { describe, it, expect } from 'vitest';
import { checkImageUrl } from '#domain/product/image-url.ts';

// Reason families, matched loosely so wording can be polished without touching every row,
// while still proving each payload is refused for the right reason (e.g. that `①②⑦.⓪.⓪.①`
// was seen as loopback after normalization, not merely as a malformed host).
const SCHEME = /must use https/;
const NOT_ABSOLUTE = /absolute URL/;
const CONTROL = /control characters/;
const CREDENTIALS = /username or password/;
const PORT = /port/;
const PRIVATE_IP = /non-public IP address/;
const PUBLIC_IP = /not an IP address/;
const LOCALHOST = /is localhost/;
const METADATA = /metadata service/;
const SINGLE_LABEL = /fully qualified/;
const INTERNAL = /internal or special-use/;
const WILDCARD_DNS = /wildcard DNS/;
const INVALID_HOST = /not a valid domain name/;
const TRAILING_DOT = /end with a dot/;
const TOO_LONG = /at most 2048/;

// Payloads largely from PayloadsAllTheThings "Server Side Request Forgery" (bypass sections)
// plus the IPv6 transition forms and cloud metadata endpoints.
const refused: Array<[input: string, reason: RegExp]> = [
  // Schemes
  ['http://cdn.example.com/a.png', SCHEME],
  ['HTTP://cdn.example.com/a.png', SCHEME],
  ['ftp://cdn.example.com/a.png', SCHEME],
  ['file:///etc/passwd', SCHEME],
  ['data:image/png;base64,iVBORw0KGgo=', SCHEME],
  ['javascript:alert(1)', SCHEME],
  ['gopher://127.0.0.1:6379/_INFO', SCHEME],
  ['dict://127.0.0.1:11211/stat', SCHEME],
  ['wss://cdn.example.com/a.png', SCHEME],
  ['blob:https://cdn.example.com/5b1f0e0c', SCHEME],

  // Not an absolute URL at all, or rejected by the WHATWG parser
  ['', NOT_ABSOLUTE],
  ['//cdn.example.com/a.png', NOT_ABSOLUTE],
  ['cdn.example.com/a.png', NOT_ABSOLUTE],
  ['/images/a.png', NOT_ABSOLUTE],
  ['https://', NOT_ABSOLUTE],
  ['https://[::1', NOT_ABSOLUTE],
  ['https://256.0.0.1/', NOT_ABSOLUTE],
  ['https://0x100000000/', NOT_ABSOLUTE],
  ['https://1.2.3.4.5/', NOT_ABSOLUTE],
  ['https://foo.0x10/', NOT_ABSOLUTE],
  ['https://[fe80::1%25eth0]/', NOT_ABSOLUTE],
  ['https://127.0.0.1%00.example.com/', NOT_ABSOLUTE],

  // Control characters the WHATWG parser would silently drop
  ['https://cdn.example.com/a\n.png', CONTROL],
  ['https://cdn.exa\tmple.com/a.png', CONTROL],
  ['https://127.0.0.1\r\n/', CONTROL],
  ['\u0000https://cdn.example.com/a.png', CONTROL],

  // Credentials
  ['https://user:pass@example.com/x.png', CREDENTIALS],
  ['https://user@cdn.example.com/a.png', CREDENTIALS],
  ['https://:pass@cdn.example.com/a.png', CREDENTIALS],
  ['https://cdn.example.com@169.254.169.254/', CREDENTIALS],

  // Ports
  ['https://example.com:8443/x.png', PORT],
  ['https://cdn.example.com:80/a.png', PORT],
  ['https://cdn.example.com:0/a.png', PORT],
  ['https://cdn.example.com:65535/a.png', PORT],
  ['https://127.0.0.1:6379/', PORT],

  // Loopback v4 in every spelling the WHATWG parser accepts
  ['https://127.0.0.1/', PRIVATE_IP],
  ['https://127.1/', PRIVATE_IP],
  ['https://127.0.1/', PRIVATE_IP],
  ['https://127.127.127.127/', PRIVATE_IP],
  ['https://127.000.000.001/', PRIVATE_IP],
  ['https://2130706433/', PRIVATE_IP],
  ['https://0x7f000001/', PRIVATE_IP],
  ['https://0X7F000001/', PRIVATE_IP],
  ['https://017700000001/', PRIVATE_IP],
  ['https://0177.0.0.1/', PRIVATE_IP],
  ['https://0177.0.0.01/', PRIVATE_IP],
  ['https://00000177.0.0.1/', PRIVATE_IP],
  ['https://0x7f.0.0.1/', PRIVATE_IP],
  ['https://0x7f.0x0.0x0.0x1/', PRIVATE_IP],
  ['https://0x7f.1/', PRIVATE_IP],
  ['https://127.0.0.1./', PRIVATE_IP],
  ['https://127.0.0.%31/', PRIVATE_IP],
  ['https://%31%32%37.0.0.1/', PRIVATE_IP],
  ['https://①②⑦.⓪.⓪.①/', PRIVATE_IP],
  ['https://127。0。0。1/', PRIVATE_IP],
  ['https://０ｘ７ｆ.1/', PRIVATE_IP],

  // Unspecified ("0.0.0.0 day")
  ['https://0/', PRIVATE_IP],
  ['https://0.0.0.0/', PRIVATE_IP],
  ['https://0x0/', PRIVATE_IP],
  ['https://[::]/', PRIVATE_IP],

  // Cloud metadata by address
  ['https://169.254.169.254/latest/meta-data/', PRIVATE_IP],
  ['https://2852039166/', PRIVATE_IP],
  ['https://0xa9fea9fe/', PRIVATE_IP],
  ['https://0xA9FEA9FE/', PRIVATE_IP],
  ['https://0251.0376.0251.0376/', PRIVATE_IP],
  ['https://0xa9.0xfe.0xa9.0xfe/', PRIVATE_IP],
  ['https://0xa9.254.0251.0376/', PRIVATE_IP],
  ['https://169.16689662/', PRIVATE_IP],
  ['https://169.254.43518/', PRIVATE_IP],
  ['https://[::ffff:169.254.169.254]/', PRIVATE_IP],
  ['https://[::ffff:a9fe:a9fe]/', PRIVATE_IP],
  ['https://[64:ff9b::169.254.169.254]/', PRIVATE_IP],
  ['https://[fd00:ec2::254]/latest/meta-data/', PRIVATE_IP],
  ['https://100.100.100.200/latest/meta-data/', PRIVATE_IP],
  ['https://192.0.0.192/latest/', PRIVATE_IP],

  // Private, CGNAT, multicast, broadcast, reserved, benchmarking, documentation
  ['https://10.0.0.1/', PRIVATE_IP],
  ['https://012.0.0.1/', PRIVATE_IP],
  ['https://172.16.0.1/', PRIVATE_IP],
  ['https://172.31.255.255/', PRIVATE_IP],
  ['https://192.168.1.1/', PRIVATE_IP],
  ['https://3232235777/', PRIVATE_IP],
  ['https://100.64.0.1/', PRIVATE_IP],
  ['https://224.0.0.1/', PRIVATE_IP],
  ['https://239.255.255.250/', PRIVATE_IP],
  ['https://255.255.255.255/', PRIVATE_IP],
  ['https://4294967295/', PRIVATE_IP],
  ['https://240.0.0.1/', PRIVATE_IP],
  ['https://198.18.0.1/', PRIVATE_IP],
  ['https://192.0.2.1/', PRIVATE_IP],
  ['https://198.51.100.1/', PRIVATE_IP],
  ['https://203.0.113.1/', PRIVATE_IP],

  // IPv6 literals and v4 embedded in v6
  ['https://[::1]/', PRIVATE_IP],
  ['https://[0:0:0:0:0:0:0:1]/', PRIVATE_IP],
  ['https://[::ffff:127.0.0.1]/', PRIVATE_IP],
  ['https://[::ffff:7f00:1]/', PRIVATE_IP],
  ['https://[0:0:0:0:0:ffff:127.0.0.1]/', PRIVATE_IP],
  ['https://[::127.0.0.1]/', PRIVATE_IP],
  ['https://[::8.8.8.8]/', PRIVATE_IP],
  ['https://[::ffff:0:127.0.0.1]/', PRIVATE_IP],
  ['https://[::ffff:10.0.0.1]/', PRIVATE_IP],
  ['https://[::ffff:100.64.0.1]/', PRIVATE_IP],
  ['https://[64:ff9b::127.0.0.1]/', PRIVATE_IP],
  ['https://[64:ff9b:1::a00:1]/', PRIVATE_IP],
  ['https://[2002:7f00:1::1]/', PRIVATE_IP],
  ['https://[2002:c0a8:101::1]/', PRIVATE_IP],
  ['https://[2001:0:4136:e378:8000:63bf:3f57:fefe]/', PRIVATE_IP],
  ['https://[fe80::1]/', PRIVATE_IP],
  ['https://[fc00::1]/', PRIVATE_IP],
  ['https://[fd12:3456:789a::1]/', PRIVATE_IP],
  ['https://[fec0::1]/', PRIVATE_IP],
  ['https://[ff02::1]/', PRIVATE_IP],
  ['https://[2001:db8::1]/', PRIVATE_IP],
  ['https://[100::1]/', PRIVATE_IP],

  // Public IP literals: refused by policy, with their own reason
  ['https://8.8.8.8/a.png', PUBLIC_IP],
  ['https://134744072/a.png', PUBLIC_IP],
  ['https://[2606:4700:4700::1111]/a.png', PUBLIC_IP],
  ['https://[::ffff:8.8.8.8]/a.png', PUBLIC_IP],

  // localhost in its disguises
  ['https://localhost/', LOCALHOST],
  ['HTTPS://LOCALHOST', LOCALHOST],
  ['https://LocalHost:443/a.png', LOCALHOST],
  ['https://localhost./', LOCALHOST],
  ['https://localhost%2e/', LOCALHOST],
  ['https://%6c%6f%63%61%6c%68%6f%73%74/', LOCALHOST],
  ['https://ｌｏｃａｌｈｏｓｔ/', LOCALHOST],
  ['https://foo.localhost/', LOCALHOST],
  ['https://a.b.localhost./', LOCALHOST],

  // Cloud metadata by name
  ['https://metadata/computeMetadata/v1/', METADATA],
  ['https://metadata.google.internal/computeMetadata/v1/', METADATA],
  ['https://METADATA.GOOGLE.INTERNAL./computeMetadata/v1/', METADATA],
  ['https://instance-data/latest/meta-data/', METADATA],
  ['https://instance-data.ec2.internal/latest/meta-data/', METADATA],
  ['https://metadata.azure.com/metadata/instance', METADATA],
  ['https://metadata.tencentyun.com/latest/meta-data/', METADATA],
  ['https://kubernetes.default/api', METADATA],

  // Single-label hosts
  ['https://intranet/a.png', SINGLE_LABEL],
  ['https://printer/a.png', SINGLE_LABEL],
  ['https://ip6-localhost/a.png', SINGLE_LABEL],

  // Internal and reverse-DNS suffixes
  ['https://printer.local/a.png', INTERNAL],
  ['https://localhost.localdomain/a.png', INTERNAL],
  ['https://host.docker.internal/a.png', INTERNAL],
  ['https://wiki.intranet/a.png', INTERNAL],
  ['https://nas.lan/a.png', INTERNAL],
  ['https://router.home.arpa/a.png', INTERNAL],
  ['https://erp.corp/a.png', INTERNAL],
  ['https://router.home/a.png', INTERNAL],
  ['https://vault.private/a.png', INTERNAL],
  ['https://kubernetes.default.svc/api', INTERNAL],
  ['https://api.default.svc.cluster.local/a.png', INTERNAL],
  ['https://1.0.0.127.in-addr.arpa/a.png', INTERNAL],
  ['https://1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa/', INTERNAL],

  // Well-known wildcard DNS names (a courtesy; see the static-limits block below)
  ['https://localtest.me/a.png', WILDCARD_DNS],
  ['https://customer1.app.localtest.me/a.png', WILDCARD_DNS],
  ['https://127.0.0.1.nip.io/a.png', WILDCARD_DNS],
  ['https://169.254.169.254.sslip.io/a.png', WILDCARD_DNS],
  ['https://lvh.me/a.png', WILDCARD_DNS],

  // Names no DNS zone can hold, which the WHATWG parser nevertheless lets through
  ['https://exa$mple.com/a.png', INVALID_HOST],
  ['https://exa*mple.com/a.png', INVALID_HOST],
  ['https://a..b.com/a.png', INVALID_HOST],
  ['https://-cdn.example.com/a.png', INVALID_HOST],
  ['https://localhost../', INVALID_HOST],

  // Trailing dot on an otherwise public name
  ['https://cdn.example.com./a.png', TRAILING_DOT],
];

const accepted: Array<[input: string, normalized: string]> = [
  ['https://cdn.example.com/a.png', 'https://cdn.example.com/a.png'],
  ['https://cdn.example.com/a.png?w=200&h=200&fit=crop', 'https://cdn.example.com/a.png?w=200&h=200&fit=crop'],
  ['https://cdn.example.com/a.png#main', 'https://cdn.example.com/a.png#main'],
  ['https://cdn.example.com:443/x.png', 'https://cdn.example.com/x.png'],
  ['https://cdn.example.com:00443/x.png', 'https://cdn.example.com/x.png'],
  ['HTTPS://CDN.EXAMPLE.COM/Products/A.PNG', 'https://cdn.example.com/Products/A.PNG'],
  ['https://bücher.example/x.jpg', 'https://xn--bcher-kva.example/x.jpg'],
  ['https://xn--bcher-kva.example/x.jpg', 'https://xn--bcher-kva.example/x.jpg'],
  ['https://例え.jp/画像.png', 'https://xn--r8jz45g.jp/%E7%94%BB%E5%83%8F.png'],
  ['https://ｃｄｎ.ｅｘａｍｐｌｅ.ｃｏｍ/a.png', 'https://cdn.example.com/a.png'],
  [
    'https://my-bucket.s3.eu-west-1.amazonaws.com/products/1.webp',
    'https://my-bucket.s3.eu-west-1.amazonaws.com/products/1.webp',
  ],
  [
    'https://cdn.shopify.com/s/files/1/0000/0001/products/shirt.jpg?v=1700000000',
    'https://cdn.shopify.com/s/files/1/0000/0001/products/shirt.jpg?v=1700000000',
  ],
  ['https://images.example.co.uk/a b.png', 'https://images.example.co.uk/a%20b.png'],
  ['  https://cdn.example.com/a.png  ', 'https://cdn.example.com/a.png'],
  ['https:cdn.example.com/a.png', 'https://cdn.example.com/a.png'],
  ['https://cdn.example.com', 'https://cdn.example.com/'],
  ['https://img_cdn.example.com/x.png', 'https://img_cdn.example.com/x.png'],
  // Look-alikes of refused names that are ordinary public domains
  ['https://192-168-1-1.example.com/x.png', 'https://192-168-1-1.example.com/x.png'],
  ['https://localhost.example.com/x.png', 'https://localhost.example.com/x.png'],
  ['https://metadata.example.com/x.png', 'https://metadata.example.com/x.png'],
  ['https://internal.example.com/x.png', 'https://internal.example.com/x.png'],
  ['https://shop.localhost-images.com/x.png', 'https://shop.localhost-images.com/x.png'],
];

describe('checkImageUrl', () => {
  it('has a representative table', () => {
    expect(refused.length).toBeGreaterThanOrEqual(60);
    expect(accepted.length).toBeGreaterThanOrEqual(10);
  });

  it.each(refused)('refuses %j', (input, reason) => {
    const result = checkImageUrl(input);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });

  it.each(accepted)('accepts %j as %s', (input, normalized) => {
    expect(checkImageUrl(input)).toEqual({ ok: true, url: normalized });
  });

  it('refuses input longer than 2048 characters before parsing', () => {
    const input = `https://cdn.example.com/${'a'.repeat(2048)}.png`;
    expect(checkImageUrl(input)).toEqual({ ok: false, reason: expect.stringMatching(TOO_LONG) });
  });

  it('refuses input whose normalized form grows past 2048 characters', () => {
    // 1425 characters in, each inner space becomes %20 on the way out.
    const input = `https://cdn.example.com/${'a '.repeat(700)}x.png`;
    expect(input.length).toBeLessThanOrEqual(2048);
    expect(checkImageUrl(input)).toEqual({ ok: false, reason: expect.stringMatching(TOO_LONG) });
  });

  it('accepts exactly 2048 characters', () => {
    const prefix = 'https://cdn.example.com/';
    const input = `${prefix}${'a'.repeat(2048 - prefix.length - 4)}.png`;
    expect(input).toHaveLength(2048);
    expect(checkImageUrl(input)).toEqual({ ok: true, url: input });
  });

  it('refuses non-string input from unvalidated JSON', () => {
    expect(checkImageUrl(42 as unknown as string).ok).toBe(false);
    expect(checkImageUrl(null as unknown as string).ok).toBe(false);
  });
});

describe('what static validation cannot see', () => {
  // These names resolve (or can be made to resolve) to private addresses, but nothing in the
  // URL says so. They pass here by design; the fetcher must check the resolved addresses
  // with isPublicIp at connect time.
  it.each([
    'https://7f000001.c0a80001.rbndr.us/a.png',
    'https://spoofed.burpcollaborator.net/a.png',
    'https://attacker-controlled.example/a.png',
  ])('passes %s (DNS decides, not the URL)', (input) => {
    expect(checkImageUrl(input).ok).toBe(true);
  });
});
