import { describe, it, expect } from 'vitest';
import { checkPublicHttpsUrl, isForbiddenHostname, isPublicIp } from '#domain/net/public-address.ts';

// The URL policy's table of payloads runs through checkImageUrl (image-url.test.ts); this file
// covers the address and host-name classifiers and the field-name parameter.

describe('checkPublicHttpsUrl', () => {
  it.each([
    ['http://cdn.example.com/hook', 'webhook_url must use https'],
    ['https://localhost/hook', 'webhook_url host is localhost'],
    ['https://10.0.0.1/hook', 'webhook_url host is a non-public IP address'],
    ['hook', 'webhook_url must be an absolute URL'],
  ])('names the field it was given when refusing %j', (input, reason) => {
    expect(checkPublicHttpsUrl(input, 'webhook_url')).toEqual({ ok: false, reason });
  });

  it('returns the normalized URL whatever the field', () => {
    expect(checkPublicHttpsUrl('https://CDN.Example.com:443/a', 'webhook_url')).toEqual({
      ok: true,
      url: 'https://cdn.example.com/a',
    });
  });
});

describe('isPublicIp', () => {
  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '2606:4700:4700::1111',
    '[2606:4700:4700::1111]',
    '2606:4700:4700::1.1.1.1',
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    '64:ff9b::808:808',
    '2002:808:808::1',
    // Teredo: server 65.54.227.120, client 8.8.8.8 (stored bit-inverted)
    '2001:0:4136:e378:8000:63bf:f7f7:f7f7',
  ])('true for %s', (address) => {
    expect(isPublicIp(address)).toBe(true);
  });

  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.20.0.1',
    '192.168.0.10',
    '169.254.169.254',
    '100.100.100.200',
    '192.0.0.192',
    '0.0.0.0',
    '255.255.255.255',
    '224.0.0.251',
    '198.19.255.255',
    '::1',
    '::',
    '[::1]',
    'fe80::1',
    'fe80::1%eth0',
    'fd00:ec2::254',
    'ff02::1',
    '2001:db8::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:0:a9fe:a9fe',
    // IPv4-compatible form is deprecated; refused even when the v4 part is public
    '::127.0.0.1',
    '::8.8.8.8',
    '::808:808',
    // ipaddr.js alone would read these dotted tails leniently; inet_pton refuses them
    '::ffff:0x7f.0.0.1',
    '::ffff:010.8.8.8',
    '64:ff9b::7f00:1',
    '64:ff9b:1::808:808',
    '2002:7f00:1::1',
    '2002:a9fe:a9fe::1',
    // Teredo with a private client (192.168.1.1) and with a private server (10.0.0.1)
    '2001:0:4136:e378:8000:63bf:3f57:fefe',
    '2001:0:a00:1:8000:63bf:f7f7:f7f7',
    // Outside 2000::/3: not allocated as global unicast
    '4000::1',
    '::2',
    // Public but with a zone id
    '2606:4700:4700::1111%eth0',
    // Loose spellings are refused rather than interpreted
    '0177.0.0.1',
    '127.1',
    '2130706433',
    '010.8.8.8',
    ' 8.8.8.8',
    '',
    'localhost',
    'not-an-ip',
  ])('false for %j', (address) => {
    expect(isPublicIp(address)).toBe(false);
  });
});

describe('isForbiddenHostname', () => {
  it.each([
    'localhost',
    'LOCALHOST',
    'localhost.',
    'foo.localhost',
    '[::1]',
    '::1',
    '127.0.0.1',
    '0x7f.1',
    '2130706433',
    '8.8.8.8',
    '[2606:4700:4700::1111]',
    'metadata.google.internal',
    'metadata',
    'intranet',
    'printer.local',
    '1.0.0.127.in-addr.arpa',
    'bücher.example',
    'exa$mple.com',
    'example.123',
    '',
    '.',
  ])('true for %j', (hostname) => {
    expect(isForbiddenHostname(hostname)).toBe(true);
  });

  it.each(['cdn.example.com', 'xn--bcher-kva.example', 'cdn.example.com.', 'images.example.co.uk'])(
    'false for %j',
    (hostname) => {
      expect(isForbiddenHostname(hostname)).toBe(false);
    },
  );
});
