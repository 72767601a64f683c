import { describe, expect, it } from '@jest/globals';
import { isLoopbackOrUnspecified, isMetadataAddress, parseAddress, publicRefusal, sameAddress } from '../../src/domain/netAddress.js';
import { parseAbsoluteTarget, parseConnectTarget } from '../../src/domain/proxyTarget.js';

describe('publicRefusal: what `public` may connect to (behaviour.md §15.2)', () => {
  it('public unicast IPv4 and IPv6 (and their IPv4-mapped and NAT64 forms) pass', () => {
    for (const a of ['93.184.216.34', '8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001::200e', '::ffff:8.8.8.8', '64:ff9b::808:808']) {
      expect(publicRefusal(a)).toBeNull();
    }
  });

  it('every other class is refused, named in the reason with the address', () => {
    const cases: Array<[string, string]> = [
      ['127.0.0.1', 'loopback'], ['127.255.0.9', 'loopback'], ['::1', 'loopback'],
      ['10.0.0.5', 'private'], ['172.16.0.1', 'private'], ['172.31.255.254', 'private'], ['192.168.1.1', 'private'],
      ['fd12:3456::1', 'private'], ['fc00::1', 'private'],
      ['169.254.1.1', 'link-local'], ['fe80::1', 'link-local'],
      ['100.64.0.1', 'CGNAT'], ['100.127.255.254', 'CGNAT'],
      ['224.0.0.1', 'multicast'], ['239.255.255.250', 'multicast'], ['ff02::1', 'multicast'],
      ['0.0.0.0', 'unspecified'], ['::', 'unspecified'], ['0.1.2.3', 'unspecified'],
      ['255.255.255.255', 'broadcast'],
      ['240.0.0.1', 'reserved'], ['192.0.2.1', 'reserved'], ['198.51.100.7', 'reserved'], ['203.0.113.9', 'reserved'], ['2001:db8::1', 'reserved'],
      ['169.254.169.254', 'metadata'], ['fd00:ec2::254', 'metadata'],
      ['::ffff:10.0.0.5', 'private'], ['::ffff:127.0.0.1', 'loopback'], ['::ffff:169.254.169.254', 'metadata'],
      ['64:ff9b::a00:5', 'private'], ['64:ff9b::7f00:1', 'loopback'],
    ];
    for (const [a, word] of cases) expect(publicRefusal(a)).toBe(`${word} address ${a}`);
  });

  it('a value that is not an address literal is refused, never resolved here', () => {
    expect(publicRefusal('example.com')).toBe('not an address example.com');
    expect(publicRefusal('127.1')).toBe('not an address 127.1');
    expect(publicRefusal('')).toBe('not an address ');
  });
});

describe('address literals', () => {
  it('strict forms only: four decimal parts, IPv6 without zone', () => {
    expect(parseAddress('10.0.0.5')?.toString()).toBe('10.0.0.5');
    expect(parseAddress('::1')?.toString()).toBe('::1');
    for (const t of ['127.1', '0x7f.0.0.1', '2130706433', '010.0.0.1', 'fe80::1%eth0', '[::1]', '1::2::3', 'localhost', '']) expect(parseAddress(t)).toBeUndefined();
  });

  it('sameAddress sees through spellings and IPv4 mapping', () => {
    expect(sameAddress('127.0.0.1', '::ffff:127.0.0.1')).toBe(true);
    expect(sameAddress('::1', '0:0:0:0:0:0:0:1')).toBe(true);
    expect(sameAddress('127.0.0.1', '127.0.0.2')).toBe(false);
    expect(sameAddress('127.0.0.1', 'localhost')).toBe(false);
  });

  it('loopback or unspecified: addresses that are always this machine', () => {
    for (const a of ['127.0.0.1', '127.8.9.10', '::1', '0.0.0.0', '::', '::ffff:127.0.0.1']) expect(isLoopbackOrUnspecified(a)).toBe(true);
    for (const a of ['10.0.0.5', '8.8.8.8', 'localhost']) expect(isLoopbackOrUnspecified(a)).toBe(false);
    expect(isMetadataAddress('::ffff:169.254.169.254')).toBe(true);
    expect(isMetadataAddress('169.254.169.253')).toBe(false);
  });
});

describe('proxy targets', () => {
  it('CONNECT host:port, [v6]:port; no port, port 0 or 99999, bare IPv6 or a bad host is undefined', () => {
    expect(parseConnectTarget('Example.COM:443')).toEqual({ host: 'example.com', port: 443 });
    expect(parseConnectTarget('10.0.0.5:22')).toEqual({ host: '10.0.0.5', port: 22 });
    expect(parseConnectTarget('[::1]:8080')).toEqual({ host: '::1', port: 8080 });
    // A name like any other (it will not resolve); it is never used as a key of a plain object.
    expect(parseConnectTarget('__proto__:443')).toEqual({ host: '__proto__', port: 443 });
    for (const t of ['example.com', 'example.com:', 'example.com:0', 'example.com:99999', 'example.com:-1', 'example.com:+80', '::1:443',
      '[::1]', '[::1]:', '[1.2.3.4]:80', ':443', 'a b:443', 'a%00:443', '*.a.com:443', '']) {
      expect(parseConnectTarget(t)).toBeUndefined();
    }
  });

  it('absolute-form http:// URLs: host, port, the path as written, and the Host to send', () => {
    expect(parseAbsoluteTarget('http://a.com/x?y=1#frag')).toEqual({ host: 'a.com', port: 80, path: '/x?y=1', authority: 'a.com' });
    expect(parseAbsoluteTarget('HTTP://A.com:8080')).toEqual({ host: 'a.com', port: 8080, path: '/', authority: 'a.com:8080' });
    expect(parseAbsoluteTarget('http://[::1]:4000/exec?x')).toEqual({ host: '::1', port: 4000, path: '/exec?x', authority: '[::1]:4000' });
    expect(parseAbsoluteTarget('http://a.com?q')).toEqual({ host: 'a.com', port: 80, path: '/?q', authority: 'a.com' });
    expect(parseAbsoluteTarget('http://a.com/%2e%2e/x')).toEqual({ host: 'a.com', port: 80, path: '/%2e%2e/x', authority: 'a.com' });
    // The URL parser's reading of numeric hosts, as the resolver would take them.
    expect(parseAbsoluteTarget('http://2130706433:4000/')).toEqual({ host: '127.0.0.1', port: 4000, path: '/', authority: '127.0.0.1:4000' });
  });

  it('other forms and hostile URLs are undefined', () => {
    for (const t of ['/exec', '*', 'https://a.com/', 'ftp://a.com/', 'http://', 'http://a.com:0/', 'http://a.com:99999/',
      'http://user:pw@127.0.0.1:4000/', 'http://a.com\\@127.0.0.1/', 'http://a b.com/', 'http://[::1/', '']) {
      expect(parseAbsoluteTarget(t)).toBeUndefined();
    }
  });
});
