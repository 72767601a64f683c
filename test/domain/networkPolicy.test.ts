import { describe, expect, it } from '@jest/globals';
import { matchAllowEntry, parseAllowEntry, type AllowEntry } from '../../src/domain/allowEntry.js';
import { LoomError } from '../../src/domain/errors.js';
import {
  allowedByPolicy, connectRefusal, describeNetworkPolicy, parseNetworkFlag, parseNetworkPolicy, refusalBeforeLookup,
  type ConnectGuard, type NetworkPolicy,
} from '../../src/domain/networkPolicy.js';

const SHAPE = 'network must be "public", "none", "open" or {"allow": [hosts]}';
const FLAG = '--network must be public, none, open or allow=host,host:port,...';

/** The LoomError a call throws, as {status, body}. */
function thrown(f: () => unknown): { status: number; body: Record<string, unknown> } {
  try {
    f();
  } catch (err) {
    if (err instanceof LoomError) return { status: err.status, body: err.body() };
    throw err;
  }
  throw new Error('did not throw');
}

describe('parseNetworkPolicy: the network field of POST /agents (behaviour.md §15.2)', () => {
  it('omitted (undefined or null) is undefined, so the stored policy is kept', () => {
    expect(parseNetworkPolicy(undefined)).toBeUndefined();
    expect(parseNetworkPolicy(null)).toBeUndefined();
  });

  it('takes the three named policies and an allow list', () => {
    expect(parseNetworkPolicy('public')).toBe('public');
    expect(parseNetworkPolicy('none')).toBe('none');
    expect(parseNetworkPolicy('open')).toBe('open');
    const allow = ['a.com', '*.b.org', '127.0.0.1:8080', '[::1]:3000', '::1', 'API.Example.COM.', 'host_1.internal:443'];
    expect(parseNetworkPolicy({ allow })).toEqual({ allow });
  });

  it('keeps its own copy of the list (a later change to the body changes nothing)', () => {
    const allow = ['a.com'];
    const p = parseNetworkPolicy({ allow }) as { allow: string[] };
    allow.push('evil.com');
    expect(p.allow).toEqual(['a.com']);
  });

  it('answers 400 with the one message for every other shape', () => {
    const bad: unknown[] = ['PUBLIC', 'workspace', '', 42, true, [], ['a.com'], {}, { allow: 'a.com' }, { allow: null },
      { allow: ['a.com'], extra: 1 }, { Allow: ['a.com'] }, Object.create({ allow: ['a.com'] }) as unknown];
    for (const raw of bad) expect(thrown(() => parseNetworkPolicy(raw))).toEqual({ status: 400, body: { error: SHAPE } });
  });

  it('hostile keys are extra keys: __proto__ and constructor get the 400 and reach no prototype', () => {
    const hostile = [
      '{"__proto__": {"allow": ["a.com"]}}',
      '{"allow": ["a.com"], "__proto__": {"polluted": true}}',
      '{"constructor": {"allow": ["a.com"]}}',
      '{"allow": ["a.com"], "constructor": {"prototype": {"polluted": true}}}',
    ];
    for (const text of hostile) expect(thrown(() => parseNetworkPolicy(JSON.parse(text)))).toEqual({ status: 400, body: { error: SHAPE } });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a bad entry is named in the message; the error stays the one text', () => {
    const cases: Array<[unknown[], string]> = [
      [[], 'allow lists no host; "none" refuses everything'],
      [[1], 'allow entries must be strings'],
      [['a.com', null], 'allow entries must be strings'],
      [[''], 'allow entry "" is empty'],
      [['a.com:0'], 'allow entry "a.com:0" has a port outside 1-65535'],
      [['a.com:65536'], 'allow entry "a.com:65536" has a port outside 1-65535'],
      [['a.com:'], 'allow entry "a.com:" has a port outside 1-65535'],
      [['a.com:http'], 'allow entry "a.com:http" has a port outside 1-65535'],
      [['*'], 'allow entry "*" is not a host name, *.suffix or an address'],
      [['*.'], 'allow entry "*." is not a host name, *.suffix or an address'],
      [['*.-'], 'allow entry "*.-" is not *. followed by a host name'],
      [['*.1.2.3.4'], 'allow entry "*.1.2.3.4" is not *. followed by a host name'],
      [['a.*.b.org'], 'allow entry "a.*.b.org" is not a host name, *.suffix or an address'],
      [['http://a.com'], 'allow entry "http://a.com" has a port outside 1-65535'],
      [['a.com/path'], 'allow entry "a.com/path" is not a host name, *.suffix or an address'],
      [['[1.2.3.4]:80'], 'allow entry "[1.2.3.4]:80" is not host, host:port, *.suffix or an address ([v6]:port for IPv6 with a port)'],
      [['[::1'], 'allow entry "[::1" is not host, host:port, *.suffix or an address ([v6]:port for IPv6 with a port)'],
      [['1::2::3'], 'allow entry "1::2::3" is not host, host:port, *.suffix or an address ([v6]:port for IPv6 with a port)'],
      [['fe80::1%eth0'], 'allow entry "fe80::1%eth0" is not host, host:port, *.suffix or an address ([v6]:port for IPv6 with a port)'],
      [['bücher.de'], 'allow entry "bücher.de" is not a host name, *.suffix or an address'],
      [['a..com'], 'allow entry "a..com" is not a host name, *.suffix or an address'],
      [['-a.com'], 'allow entry "-a.com" is not a host name, *.suffix or an address'],
      [['a.com\nX-Evil: 1'], 'allow entry "a.com\\nX-Evil: 1" has a port outside 1-65535'],
    ];
    for (const [allow, message] of cases) {
      expect(thrown(() => parseNetworkPolicy({ allow }))).toEqual({ status: 400, body: { error: SHAPE, message } });
    }
  });

  it('bounds the list (64 entries) and each entry (a 253-character host and a port)', () => {
    const many = Array.from({ length: 64 }, (_, i) => `h${i}.example.com`);
    expect(parseNetworkPolicy({ allow: many })).toEqual({ allow: many });
    expect(thrown(() => parseNetworkPolicy({ allow: [...many, 'one-more.com'] }))).toEqual({ status: 400, body: { error: SHAPE, message: 'allow lists at most 64 entries' } });
    expect(thrown(() => parseNetworkPolicy({ allow: new Array(1e6) }))).toEqual({ status: 400, body: { error: SHAPE, message: 'allow lists at most 64 entries' } });
    const longest = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    expect(longest.length).toBe(253);
    expect(parseNetworkPolicy({ allow: [`${longest}:65535`] })).toEqual({ allow: [`${longest}:65535`] });
    const tooLong = `${longest}e`;
    expect(thrown(() => parseNetworkPolicy({ allow: [tooLong] })).body.message).toBe(`allow entry ${JSON.stringify(tooLong.slice(0, 80) + '…')} is not a host name, *.suffix or an address`);
    const huge = 'a'.repeat(100000);
    expect(thrown(() => parseNetworkPolicy({ allow: [huge] })).body.message).toBe(`allow entry ${JSON.stringify(huge.slice(0, 80) + '…')} is longer than 259 characters`);
  });
});

describe('parseNetworkFlag: loom agent add --network', () => {
  it('takes public, none, open and allow=host,host:port', () => {
    expect(parseNetworkFlag('public')).toBe('public');
    expect(parseNetworkFlag('none')).toBe('none');
    expect(parseNetworkFlag('open')).toBe('open');
    expect(parseNetworkFlag('allow=a.com,*.b.org, 127.0.0.1:8080,[::1]:3000')).toEqual({ allow: ['a.com', '*.b.org', '127.0.0.1:8080', '[::1]:3000'] });
  });

  it('refuses other text with the flag message (and names a bad entry)', () => {
    for (const text of ['', 'Public', 'allow', 'allow:a.com', 'deny=a.com', '{"allow":["a.com"]}']) {
      expect(thrown(() => parseNetworkFlag(text))).toEqual({ status: 400, body: { error: FLAG } });
    }
    expect(thrown(() => parseNetworkFlag('allow='))).toEqual({ status: 400, body: { error: FLAG, message: 'allow lists no host; "none" refuses everything' } });
    expect(thrown(() => parseNetworkFlag('allow=a.com,,b.com'))).toEqual({ status: 400, body: { error: FLAG, message: 'allow entry "" is empty' } });
    expect(thrown(() => parseNetworkFlag('allow=a.com:99999'))).toEqual({ status: 400, body: { error: FLAG, message: 'allow entry "a.com:99999" has a port outside 1-65535' } });
  });
});

describe('describeNetworkPolicy: the short form in messages', () => {
  it('names the policy, an allow list as its entries', () => {
    expect(describeNetworkPolicy('public')).toBe('public');
    expect(describeNetworkPolicy('none')).toBe('none');
    expect(describeNetworkPolicy('open')).toBe('open');
    expect(describeNetworkPolicy({ allow: ['a.com', '*.b.org', '127.0.0.1:8080'] })).toBe('allow a.com, *.b.org, 127.0.0.1:8080');
  });
});

describe('allow entries: what each one matches', () => {
  const entry = (text: string) => parseAllowEntry(text) as AllowEntry;

  it('parses into name, suffix and address, normalised', () => {
    expect(parseAllowEntry('API.Example.com.')).toEqual({ kind: 'name', host: 'api.example.com', port: undefined });
    expect(parseAllowEntry('*.B.org:443')).toEqual({ kind: 'suffix', host: 'b.org', port: 443 });
    expect(parseAllowEntry('[::1]:8080')).toEqual({ kind: 'address', host: '::1', port: 8080 });
    expect(parseAllowEntry('::1:8080')).toEqual({ kind: 'address', host: '::1:8080', port: undefined });
    expect(parseAllowEntry('10.0.0.5')).toEqual({ kind: 'address', host: '10.0.0.5', port: undefined });
  });

  it('an exact name matches itself only, in any case, on any port unless it names one', () => {
    expect(matchAllowEntry(entry('a.com'), 'a.com', 443)).toBe(true);
    expect(matchAllowEntry(entry('A.com'), 'a.com', 80)).toBe(true);
    expect(matchAllowEntry(entry('a.com'), 'www.a.com', 443)).toBe(false);
    expect(matchAllowEntry(entry('a.com'), 'evila.com', 443)).toBe(false);
    expect(matchAllowEntry(entry('a.com:443'), 'a.com', 443)).toBe(true);
    expect(matchAllowEntry(entry('a.com:443'), 'a.com', 80)).toBe(false);
  });

  it('*.suffix matches hosts below it, never the suffix itself or a look-alike', () => {
    expect(matchAllowEntry(entry('*.b.org'), 'x.b.org', 443)).toBe(true);
    expect(matchAllowEntry(entry('*.b.org'), 'a.x.b.org', 443)).toBe(true);
    expect(matchAllowEntry(entry('*.b.org'), 'b.org', 443)).toBe(false);
    expect(matchAllowEntry(entry('*.b.org'), 'evilb.org', 443)).toBe(false);
    expect(matchAllowEntry(entry('*.b.org'), '.b.org', 443)).toBe(false);
    expect(matchAllowEntry(entry('*.b.org:8443'), 'x.b.org', 443)).toBe(false);
  });

  it('an address matches the same address in any spelling, never a name', () => {
    expect(matchAllowEntry(entry('127.0.0.1:8080'), '127.0.0.1', 8080)).toBe(true);
    expect(matchAllowEntry(entry('127.0.0.1:8080'), '::ffff:127.0.0.1', 8080)).toBe(true);
    expect(matchAllowEntry(entry('127.0.0.1:8080'), '127.0.0.2', 8080)).toBe(false);
    expect(matchAllowEntry(entry('127.0.0.1:8080'), 'localhost', 8080)).toBe(false);
    expect(matchAllowEntry(entry('[::1]:3000'), '0:0:0:0:0:0:0:1', 3000)).toBe(true);
    expect(matchAllowEntry(entry('[::1]:3000'), '::1', 3001)).toBe(false);
  });

  it('allowedByPolicy: any entry of the list', () => {
    const p = { allow: ['a.com', '*.b.org:443', '127.0.0.1:8080'] };
    expect(allowedByPolicy(p, 'a.com', 1)).toBe(true);
    expect(allowedByPolicy(p, 'x.b.org', 443)).toBe(true);
    expect(allowedByPolicy(p, 'x.b.org', 80)).toBe(false);
    expect(allowedByPolicy(p, '127.0.0.1', 8080)).toBe(true);
    expect(allowedByPolicy(p, 'c.net', 443)).toBe(false);
  });
});

describe('refusals: what the proxy answers for one target and one resolved address', () => {
  const guard: ConnectGuard = { daemonPort: 4000, proxyPort: 4001, isLocal: (a) => a === '127.0.0.1' || a === '::1' || a === '192.168.1.20' };

  it('before any lookup: none refuses all, an allow list every host it does not name', () => {
    expect(refusalBeforeLookup('none', 'a.com', 443)).toBe('network none');
    expect(refusalBeforeLookup({ allow: ['a.com'] }, 'b.com', 443)).toBe('not in allow list');
    expect(refusalBeforeLookup({ allow: ['a.com'] }, 'a.com', 443)).toBeNull();
    expect(refusalBeforeLookup('public', 'anything.test', 1)).toBeNull();
    expect(refusalBeforeLookup('open', 'anything.test', 1)).toBeNull();
  });

  it('public: only public unicast addresses', () => {
    expect(connectRefusal('public', 'a.com', 443, '93.184.216.34', guard)).toBeNull();
    expect(connectRefusal('public', 'a.com', 443, '10.0.0.5', guard)).toBe('private address 10.0.0.5');
    expect(connectRefusal('public', 'a.com', 443, '127.0.0.1', guard)).toBe('loopback address 127.0.0.1');
    expect(connectRefusal('public', 'a.com', 443, '169.254.169.254', guard)).toBe('metadata address 169.254.169.254');
  });

  it("the daemon's port (and the proxy's) on any local address is refused under every policy, by an allow entry too", () => {
    const policies: NetworkPolicy[] = ['open', 'public', { allow: ['127.0.0.1', '[::1]', 'localhost', '192.168.1.20'] }];
    for (const p of policies) {
      expect(connectRefusal(p, '127.0.0.1', 4000, '127.0.0.1', guard)).toBe('daemon port');
      expect(connectRefusal(p, '::1', 4000, '::1', guard)).toBe('daemon port');
      expect(connectRefusal(p, '192.168.1.20', 4000, '192.168.1.20', guard)).toBe('daemon port');
      expect(connectRefusal(p, '127.0.0.1', 4001, '127.0.0.1', guard)).toBe('proxy port');
    }
    expect(connectRefusal({ allow: ['127.0.0.1:4000'] }, '127.0.0.1', 4000, '127.0.0.1', guard)).toBe('daemon port');
    expect(connectRefusal({ allow: ['localhost'] }, 'localhost', 4000, '127.0.0.1', guard)).toBe('daemon port');
    // The same port on another machine is just a port.
    expect(connectRefusal('open', 'b.com', 4000, '93.184.216.34', guard)).toBeNull();
    expect(connectRefusal({ allow: ['10.0.0.5'] }, '10.0.0.5', 4000, '10.0.0.5', guard)).toBeNull();
  });

  it('allow: an entry may name a loopback or private address; a name never reaches the metadata address unless listed literally', () => {
    expect(connectRefusal({ allow: ['127.0.0.1:8080'] }, '127.0.0.1', 8080, '127.0.0.1', guard)).toBeNull();
    expect(connectRefusal({ allow: ['dev.internal'] }, 'dev.internal', 80, '10.1.2.3', guard)).toBeNull();
    expect(connectRefusal({ allow: ['meta.internal'] }, 'meta.internal', 80, '169.254.169.254', guard)).toBe('metadata address 169.254.169.254');
    expect(connectRefusal({ allow: ['meta.internal', '169.254.169.254'] }, 'meta.internal', 80, '169.254.169.254', guard)).toBeNull();
    expect(connectRefusal({ allow: ['a.com'] }, 'b.com', 80, '93.184.216.34', guard)).toBe('not in allow list');
  });

  it('open connects anywhere but the protected ports; none nowhere', () => {
    expect(connectRefusal('open', 'a.com', 22, '10.0.0.5', guard)).toBeNull();
    expect(connectRefusal('none', 'a.com', 443, '93.184.216.34', guard)).toBe('network none');
  });
});
