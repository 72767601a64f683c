import { describe, expect, it } from '@jest/globals';
import { parseTrace, TraceFormatError } from '../../src/domain/trace.js';
import { stepLine } from '../../src/domain/traceLines.js';
import { envRefs, expandEnvRefs, expandPort, normalise, scrub, templateSet } from '../../src/domain/traceText.js';

const header = '{"loom_trace":1,"created_at":"2026-01-01T00:00:00.000Z","loom_version":"0.1.0","protocol":"0.1","note":null}';

function damaged(text: string): TraceFormatError {
  try {
    parseTrace(text);
  } catch (err) {
    if (err instanceof TraceFormatError) return err;
    throw err;
  }
  throw new Error('parsed a damaged trace');
}

describe('trace format (behaviour.md §14.2)', () => {
  it('parses a header and steps, sorts them by seq and keeps the line of each', () => {
    const t = parseTrace([
      header,
      '{"seq":2,"kind":"exec","via":"mcp","agent_id":"leo","topic":"main","cmd":"/info"}',
      '',
      '{"seq":1,"t_ms":0,"kind":"agent","agent_id":"leo"}',
    ].join('\n'));
    expect(t.header?.loom_trace).toBe(1);
    expect(t.steps.map((s) => [s.step.seq, s.step.kind, s.line])).toEqual([[1, 'agent', 4], [2, 'exec', 2]]);
  });

  it('reads version 2 steps: queued_ms, ticket and the session changes (names only)', () => {
    const t = parseTrace([
      '{"loom_trace":2,"created_at":"2026-01-01T00:00:00.000Z"}',
      JSON.stringify({ seq: 1, t_ms: 5, kind: 'exec', via: 'exec', agent_id: 'leo', topic: 'main', cmd: '/open ~/a.md', session: [
        { type: 'session.opened', uri: 'file://~/a.md', title: null }, { type: 'session.navigated', block: '#b' },
        { type: 'session.set', names: ['city'] }, { type: 'session.cleared', names: ['city'] }, { type: 'session.closed' },
        { type: 'session.opened', uri: 'file://~/b.md', title: 'B', back: true },
      ], expect: { status: 200 }, duration_ms: 9, queued_ms: 2, ticket: 't4' }),
    ].join('\n'));
    expect(t.header?.loom_trace).toBe(2);
    expect(t.steps[0].step).toMatchObject({ queued_ms: 2, ticket: 't4', session: [
      { type: 'session.opened', uri: 'file://~/a.md', title: null }, { type: 'session.navigated', block: '#b' },
      { type: 'session.set', names: ['city'] }, { type: 'session.cleared', names: ['city'] }, { type: 'session.closed' },
      { type: 'session.opened', uri: 'file://~/b.md', title: 'B', back: true },
    ] });
  });

  it('a hand-written script needs no header, seq, via, agent or expect', () => {
    const t = parseTrace('{"kind":"exec","cmd":"/help"}\n{"kind":"exec","topic":"notes","cmd":"/info"}\n');
    expect(t.header).toBeNull();
    expect(t.steps.map((s) => s.step)).toEqual([
      { seq: 1, kind: 'exec', via: 'exec', agent_id: 'default', topic: 'main', cmd: '/help' },
      { seq: 2, kind: 'exec', via: 'exec', agent_id: 'default', topic: 'notes', cmd: '/info' },
    ]);
  });

  it.each([
    [`${header}\n{"seq":1,"kind":"exec","cmd":"/help"\n`, 2, /^not valid JSON/],
    [`${header}\n[1,2]\n`, 2, /^each line must be one JSON object$/],
    [`${header}\n{"kind":"teleport"}\n`, 2, /^unknown kind "teleport" \(use agent, file, exec, webhook, sleep\)$/],
    [`${header}\n\n\n{"kind":"exec","cmd":"help"}\n`, 4, /^"cmd" must start with \/$/],
    [`${header}\n{"seq":1,"kind":"sleep","ms":1}\n{"seq":1,"kind":"sleep","ms":1}\n`, 3, /^seq 1 is also used on line 2$/],
    [`${header}\n{"kind":"file","path":"/etc/passwd","content":"x"}\n`, 2, /^"path" must start with ~\/ and stay inside the home/],
    [`${header}\n{"kind":"file","path":"~/../x","content":"x"}\n`, 2, /stay inside the home/],
    ['{"loom_trace":3}\n', 1, /^unsupported trace format 3 \(this Loom reads 1 and 2\)$/],
    ['{"loom_trace":"2"}\n', 1, /^unsupported trace format "2" \(this Loom reads 1 and 2\)$/],
    [`${header}\n{"kind":"exec","cmd":"/x","queued_ms":-1}\n`, 2, /^"queued_ms" must be a number ≥ 0$/],
    [`${header}\n{"kind":"exec","cmd":"/x","ticket":"x1"}\n`, 2, /^"ticket" must be t<number> \(got "x1"\)$/],
    [`${header}\n{"kind":"exec","cmd":"/x","session":{}}\n`, 2, /^"session" must be an array of changes$/],
    [`${header}\n{"kind":"exec","cmd":"/x","session":[{"type":"session.set","names":["a b"]}]}\n`, 2, /^"session\[0\]".names must be an array of variable names$/],
    [`${header}\n{"kind":"exec","cmd":"/x","session":[{"type":"__proto__"}]}\n`, 2, /^"session\[0\]" has an unknown type "__proto__"/],
    [`${header}\n{"kind":"exec","cmd":"/x","session":[{"type":"session.opened","uri":7}]}\n`, 2, /^"session\[0\]".uri must be a string$/],
    [`{"kind":"sleep","ms":1}\n${header}\n`, 2, /^a header line \(loom_trace\) may only come first$/],
    [`${header}\n{"kind":"exec","cmd":"/x","expect":{"status":"200"}}\n`, 2, /^"expect.status" must be an integer$/],
    [`${header}\n{"kind":"sleep","ms":-5}\n`, 2, /^"ms" must be a number ≥ 0$/],
  ])('a damaged line is reported with its number: %#', (text, line, problem) => {
    const err = damaged(text);
    expect(err.line).toBe(line);
    expect(err.problem).toMatch(problem);
  });

  it.each([
    ['~', /^"path" must start with ~\/ and stay inside the home \(got "~"\)$/],
    ['~/', /^"path" must name a file: ~\/ then names separated by single slashes, no \. parts \(got "~\/"\)$/],
    ['~/notes/', /^"path" must name a file/],
    ['~/a//b.md', /^"path" must name a file/],
    ['~/./b.md', /^"path" must name a file/],
  ])('a file path that names no file (%s) is refused at parse time with its line', (path, problem) => {
    const err = damaged(`${header}\n{"kind":"agent","agent_id":"leo"}\n${JSON.stringify({ kind: 'file', agent_id: 'leo', path, content: 'x' })}\n`);
    expect(err.line).toBe(3);
    expect(err.problem).toMatch(problem);
  });

  it('a sleep beyond setTimeout\'s maximum (2^31-1 ms) is refused with its line; the maximum itself is kept', () => {
    for (const ms of ['1e300', '2147483648']) {
      const err = damaged(`${header}\n{"kind":"sleep","ms":${ms}}\n`);
      expect(err.line).toBe(2);
      expect(err.problem).toMatch(/^"ms" must be at most 2147483647 \(about 24\.8 days\)/);
    }
    expect(parseTrace('{"kind":"sleep","ms":2147483647}').steps[0].step).toEqual({ seq: 1, kind: 'sleep', ms: 2147483647 });
  });

  it.each([
    ['exec via mcp', { kind: 'exec', via: 'mcp', agent_id: 'leo\r\nX-Evil: 1', cmd: '/info' }],
    ['exec', { kind: 'exec', agent_id: '../etc', cmd: '/info' }],
    ['agent', { kind: 'agent', agent_id: 'a b' }],
    ['file', { kind: 'file', agent_id: '\u001b]0;pwned\u0007', path: '~/a.md', content: 'x' }],
    ['webhook', { kind: 'webhook', agent_id: 'leo/x', text: 'hi' }],
  ])('an agent_id that is not an agent id (%s step) is refused at parse time, naming it and its line', (_kind, step) => {
    const err = damaged(`${header}\n\n${JSON.stringify(step)}\n`);
    expect(err.line).toBe(3);
    expect(err.problem).toBe(`"agent_id" must be an agent id (letters, digits, . _ -; up to 64) (got ${JSON.stringify(step.agent_id)})`);
  });

  it('a step survives serialising and parsing unchanged', () => {
    const step = { seq: 3, t_ms: 9, kind: 'exec' as const, via: 'exec' as const, agent_id: 'leo', topic: 'main', cmd: '/open ~/w.md', request_id: 'r1', expect: { status: 200, content: 're: [r1] /open ~/w.md\nx' }, duration_ms: 4 };
    expect(parseTrace(stepLine(step)).steps[0].step).toEqual(step);
  });
});

describe('secrets in traces (behaviour.md §14.2)', () => {
  it('every persistent /set value becomes ${env:NAME}; session values stay', () => {
    const cmd = '/set $TOKEN = "ab\\"cd"\n{city} = "Seoul"\n$OTHER = \'x y\'\n```KEY\nline1\nline2\n```\n$BROKEN = "unclosed';
    const t = templateSet(cmd);
    expect(t.cmd).toBe('/set $TOKEN = ${env:TOKEN}\n{city} = "Seoul"\n$OTHER = ${env:OTHER}\n$KEY = ${env:KEY}\n$BROKEN = ${env:BROKEN}');
    expect(t.secrets).toEqual([['TOKEN', 'ab"cd'], ['OTHER', 'x y'], ['KEY', 'line1\nline2'], ['BROKEN', 'unclosed']]);
    expect(templateSet('/open ~/a.md')).toEqual({ cmd: '/open ~/a.md', secrets: [] });
    expect(templateSet('/set').cmd).toBe('/set');
  });

  it('finds /set however it is written (leading spaces, any case) and nothing in other commands', () => {
    expect(templateSet('  /SET $TOKEN = "s3cret-upper"')).toEqual({ cmd: '  /SET $TOKEN = ${env:TOKEN}', secrets: [['TOKEN', 's3cret-upper']] });
    expect(templateSet('\t/Set $K = v')).toEqual({ cmd: '\t/Set $K = ${env:K}', secrets: [['K', 'v']] });
    for (const other of ['/sessions', '/source ~/a.md', '/exec echo /set $X = 1', 'x /set $X = 1', '/s', '', '/', '/setx $X = 1']) {
      expect(templateSet(other)).toEqual({ cmd: other, secrets: [] });
    }
  });

  it('a fence on the header line is a value too, and an unclosed fence is taken out and stays open', () => {
    // /set reads the rest of its first line like a body line (parseAssignments): `/set ```$KEY` opens a block.
    const first = templateSet('/set ```$APIKEY\ns3cret-firstline-fence-2\n```\n$1bad = x');
    expect(first.cmd).toBe('/set $APIKEY = ${env:APIKEY}\n$1bad = x');
    expect(first.secrets).toEqual([['APIKEY', 's3cret-firstline-fence-2']]);
    const open = templateSet('/set $A = "1"\n```$RACE\ns3cret-race-fence-1\nmore');
    expect(open.cmd).toBe('/set $A = ${env:A}\n```$RACE\n${env:RACE}');
    expect(open.secrets).toEqual([['A', '1'], ['RACE', 's3cret-race-fence-1\nmore']]);
    expect(JSON.stringify([first.cmd, open.cmd])).not.toMatch(/s3cret/);
    // Replayed, the unclosed block comes back unclosed: /set fails again, as it did when recorded.
    expect(expandEnvRefs(open.cmd, (n) => ({ A: '1', RACE: 's3cret-race-fence-1\nmore' } as Record<string, string>)[n])).toEqual({ ok: true, cmd: '/set $A = "1"\n```$RACE\ns3cret-race-fence-1\nmore' });
  });

  it('a replay puts values back so /set reads exactly them, and names the first missing one', () => {
    const values = new Map([['TOKEN', 'ab"c\\d'], ['KEY', 'line1\n```\nline2'], ['PORT', '8080']]);
    const lookup = (n: string) => values.get(n);
    expect(expandEnvRefs('/set $TOKEN = ${env:TOKEN}', lookup)).toEqual({ ok: true, cmd: '/set $TOKEN = "ab\\"c\\\\d"' });
    expect(expandEnvRefs('/set $KEY = ${env:KEY}\n$TOKEN = ${env:TOKEN}', lookup)).toEqual({ ok: true, cmd: '/set\n````$KEY\nline1\n```\nline2\n````\n$TOKEN = "ab\\"c\\\\d"' });
    expect(expandEnvRefs('/exec curl http://127.0.0.1:${env:PORT}/x', lookup)).toEqual({ ok: true, cmd: '/exec curl http://127.0.0.1:8080/x' });
    expect(expandEnvRefs('/set $A = ${env:A}\n$TOKEN = ${env:TOKEN}', lookup)).toEqual({ ok: false, missing: 'A' });
    expect(envRefs('a ${env:X} b ${env:Y_2} ${env:}')).toEqual(['X', 'Y_2']);
  });

  it('scrub: secrets (4+ characters), webhook tokens, capability secrets, home and port', () => {
    const token = `wh_${'a'.repeat(43)}`;
    const cap = `caps_${'B'.repeat(43)}`;
    const text = `s3cret at /home/u/leo/x and /home/u/leo, not /home/u/leo2; http://127.0.0.1:4567/webhook/${token} ${cap} localhost:45678 abc`;
    expect(scrub(text, { home: '/home/u/leo', port: 4567, secrets: [['T', 's3cret'], ['S', 'abc']] }))
      .toBe('${env:T} at ~/x and ~, not /home/u/leo2; http://127.0.0.1:{port}/webhook/wh_<token> caps_<secret> localhost:45678 abc');
    expect(expandPort('open http://127.0.0.1:{port}/x and {port}', 99)).toBe('open http://127.0.0.1:99/x and {port}');
  });

  it('normalise: ids, ULIDs, timestamps, durations, temp paths, webhook URLs (behaviour.md §14.3)', () => {
    const text = 'evt_01M85ZFQPH5XXBG52Z7D712RTK at 2026-11-24T05:12:03.537Z took 12 ms and 1.5 s; cap_x-Y_z trc_01M8600JB213CW31HR785F8AGA /tmp/loom-replay-x/agents/h/a.md http://127.0.0.1:{port}/webhook/wh_<token> 5 steps';
    expect(normalise(text, ['/tmp'])).toBe('evt_<id> at <time> took <n> ms and <n> s; cap_<id> trc_<id> <tmp> <webhook-url> 5 steps');
  });
});
