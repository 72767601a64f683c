import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_LIMITS, makeInvoker } from '../../src/commands/actions/invoke.js';
import type { ActionDef, ActionDoc } from '../../src/sfmd/types.js';
import { tempDir } from '../helpers/temp.js';
import { cli, context, doc, f, loaded, req, world, type World, setVars } from './helpers.js';

let w: World;
let dir: string;
const invoke = makeInvoker({ http: DEFAULT_LIMITS.http, cli: { timeoutMs: 1500, maxBytes: 1 << 20 } });

beforeAll(() => {
  w = world(4567);
  dir = realpathSync(tempDir('loom-cli-doc-'));
});
afterAll(() => { delete process.env.LOOM_TEST_DAEMON_ONLY; });

async function call(a: ActionDef, args = '', opts: { origin?: 'local' | 'web' | 'manifest'; topic?: string; ctx?: ReturnType<typeof context>; d?: ActionDoc } = {}) {
  const c = opts.ctx ?? context(w, opts.topic ?? 'main');
  return invoke(c, loaded(opts.d ?? doc([a]), { dir, origin: opts.origin, display: opts.origin === 'web' ? 'https://example.test/doc.md' : undefined }), a.id, args);
}

/** True when a process no longer runs (gone, or a zombie nobody has reaped yet). */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 50; i++) {
    let stat = '';
    try { stat = readFileSync(`/proc/${pid}/stat`, 'utf8'); } catch { return true; /* no such process */ }
    if (/^\d+ \(.*\) Z/.test(stat)) return true;
    await new Promise((res) => setTimeout(res, 20));
  }
  return false;
}

const NASTY = ["it's", 'say "hi"', '$(id)', '`id`', 'a; echo pwned', 'line1\nline2', '-n', '--help', '$HOME', 'back\\slash', '*', ''];

describe('behaviour.md §4.8 CLI execution', () => {
  it.each(NASTY)('when a field value is %j, then it reaches the command as one literal argument in bare, "…" and \'…\' slots', async (v) => {
    const a = cli('args', `printf '[%s]' {v} "{v}" '{v}'`, [req('v')]);
    const r = await call(a, `-- "${v.replace(/[\\"]/g, (c) => `\\${c}`)}"`);
    expect(r).toEqual({ ok: true, code: null, body: `[${v}][${v}][${v}]` });
  });

  it('when it runs, then cwd is the document folder, stdin is /dev/null and HOME is the agent home', async () => {
    const r = await call(cli('where', 'pwd; cat; echo "home=$HOME"'));
    expect(r.body).toBe(`${dir}\nhome=${w.home}`);
  });

  it('when it runs, then LOOM_* variables, LOOM_USER_HOME and SVC_PORT are exported', async () => {
    const r = await call(cli('envs', 'echo "$LOOM_AGENT_ID|$LOOM_TOPIC|$LOOM_HOME|$LOOM_DOC|$LOOM_DOC_DIR|$LOOM_USER_HOME|$SVC_PORT"'), '', { topic: 'app:wx' });
    expect(r.body).toBe(`leo|app:wx|${w.home}|${join(dir, 'string.md')}|${dir}|${process.env.HOME}|4567`);
  });

  it('when stored variables exist, then they are exported as environment, never pasted into the command text', async () => {
    await w.env.set('leo', {}, { GH_TOKEN: 'g-secret', SHARED: 'global' });
    await w.env.set('leo', { app: 'gh' }, { SHARED: 'app' });
    await w.env.set('leo', { app: 'gh', config: 'work' }, { CFG: 'cfg' });
    const a = cli('tok', 'printf "%s\\n" "$BASH_EXECUTION_STRING"; echo "$GH_TOKEN $SHARED $CFG"');
    const r = await call(a, '', { topic: 'app:gh:work' });
    expect(r.body).toBe('printf "%s\\n" "$BASH_EXECUTION_STRING"; echo "$GH_TOKEN $SHARED $CFG"\ng-secret app cfg');
  });

  it('when the command references a session variable as $name, then it is exported unless the store shadows it', async () => {
    const c = context(w, 'main');
    setVars(c, { who: 'ann' });
    setVars(c, { SHARED: 'session' });
    setVars(c, { unused: 'x' });
    const r = await call(cli('sv', 'echo "$who $SHARED $(printenv unused || echo none)"'), '', { ctx: c });
    expect(r.body).toBe('ann global none');
  });

  it('when the command uses {var} for a session variable, then it is substituted as a quoted word', async () => {
    const c = context(w, 'main');
    setVars(c, { msg: "it's $x" });
    expect((await call(cli('sv2', "printf '%s' {msg}"), '', { ctx: c })).body).toBe("it's $x");
  });

  it('when the document declares env: defaults, then they fill names no other layer sets (winning over the daemon environment)', async () => {
    process.env.LOOM_TEST_DAEMON_ONLY = 'daemon';
    const a = cli('d', 'echo "$LOOM_TEST_DAEMON_ONLY $SHARED $UNITS"');
    const d = doc([a], { env: [{ name: 'LOOM_TEST_DAEMON_ONLY', default: 'doc-default', required: false }, { name: 'SHARED', default: 'nope', required: false }, { name: 'UNITS', default: 'metric', required: false }] });
    expect((await call(a, '', { d })).body).toBe('doc-default global metric');
  });

  it('when the command exits non-zero, then EXIT_<n> with the raw output', async () => {
    expect(await call(cli('fail', 'echo out; echo err >&2; exit 3'))).toEqual({ ok: false, code: 'EXIT_3', body: 'ERROR(EXIT_3): /act.fail exited with status 3\nout\nerr' });
  });

  it('when the command exits non-zero and has a template, then the error line is followed by the template output', async () => {
    const a = cli('fail2', 'echo \'{"e":"bad"}\'; exit 2', [], { template: ['Problem: {Response.body.e} (exit {Response.exit_code})'] });
    expect(await call(a)).toEqual({ ok: false, code: 'EXIT_2', body: 'ERROR(EXIT_2): /act.fail2 exited with status 2\nProblem: bad (exit 2)' });
  });

  it('when the command is killed by a signal, then the status is 128+s', async () => {
    expect((await call(cli('sig', 'kill -TERM $$'))).code).toBe('EXIT_143');
  });

  it('when the command prints nothing, then (no output)', async () => {
    expect(await call(cli('quiet', 'true'))).toEqual({ ok: true, code: null, body: '(no output)' });
  });

  it('when a template reads a CLI result, then stdout, stderr, exit_code and stdout JSON paths are available', async () => {
    const a = cli('j', 'echo \'{"items":[{"n":"a"},{"n":"b"}]}\'; echo note >&2', [], {
      template: ['for: i in Response.body.items', '- {i.n}', 'end:', 'err={Response.stderr} code={Response.exit_code} status={Response.status}'],
    });
    expect((await call(a)).body).toBe('- a\n- b\nerr=note code=0 status=0');
  });

  it('when stdout and stderr interleave, then Response.body keeps arrival order and trailing newlines go', async () => {
    const a = cli('mix', 'echo 1; sleep 0.2; echo 2 >&2; sleep 0.2; echo 3', [], { template: ['[{Response.body}]', '[{Response.stdout}]'] });
    expect((await call(a)).body).toBe('[1\n2\n3]\n[1\n3]');
  });

  it('when the command runs too long, then TIMEOUT and the whole process group is killed', async () => {
    const pidFile = join(dir, 'bg.pid');
    const r = await call(cli('slow', `sleep 30 & echo $! > ${pidFile}; wait`));
    expect(r).toEqual({ ok: false, code: 'TIMEOUT', body: 'ERROR(TIMEOUT): /act.slow timed out after 2 s' });
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(await gone(pid)).toBe(true);
  });

  it('when the topic is closed while it runs, then CONFLICT and the group is killed', async () => {
    const ctl = new AbortController();
    const p = call(cli('long', 'sleep 30'), '', { ctx: context(w, 'main', { signal: ctl.signal }) });
    setTimeout(() => ctl.abort(), 100);
    expect(await p).toEqual({ ok: false, code: 'CONFLICT', body: 'ERROR(CONFLICT): Topic main was closed while this command ran' });
  });

  it('when the document folder is gone, then INTERNAL_ERROR names the spawn failure', async () => {
    const gone = join(dir, 'removed-folder');
    const r = await invoke(context(w), loaded(doc([cli('x', 'true')]), { dir: gone }), 'x', '');
    expect(r).toEqual({ ok: false, code: 'INTERNAL_ERROR', body: 'ERROR(INTERNAL_ERROR): Internal error: spawn /bin/bash ENOENT' });
  });

  it('when a value would end a here-document, then INVALID_ARGS and nothing runs', async () => {
    const a = cli('hd', "cat <<'EOF'\n{v}\nEOF", [req('v')]);
    expect(await call(a, '"x\nEOF"')).toEqual({ ok: false, code: 'INVALID_ARGS', body: 'ERROR(INVALID_ARGS): Value for --v would end the here-document\nRecovery: /act.hd --help' });
  });
});

describe('behaviour.md §4.14 locality rule', () => {
  it('when the document is a web page, then FORBIDDEN and nothing is executed', async () => {
    const marker = join(dir, 'ran-web');
    expect(await call(cli('x', `touch ${marker}`), '', { origin: 'web' })).toEqual({
      ok: false, code: 'FORBIDDEN', body: 'ERROR(FORBIDDEN): CLI actions run only from local documents; https://example.test/doc.md is a web page',
    });
    expect(existsSync(marker)).toBe(false);
  });

  it('when the document is a linked package page, then FORBIDDEN names a linked package', async () => {
    const r = await invoke(context(w), { ...loaded(doc([cli('x', 'true')]), { origin: 'manifest' }), display: 'app:moltbook' }, 'x', '');
    expect(r.body).toBe('ERROR(FORBIDDEN): CLI actions run only from local documents; app:moltbook is a linked package');
  });
});

describe('behaviour.md §5.4 --<field>-file through the invoker', () => {
  const a = cli('note', "printf '%s' {text}", [req('text'), f('title')]);

  it('when the file is in the home, then its content is used verbatim (no trailing-newline trimming, no substitution)', async () => {
    writeFileSync(join(w.home, 'n.txt'), 'hi {title}\n\n');
    expect((await call(a, '--text-file n.txt --title T', {})).body).toBe('hi {title}');
    const c = cli('len', 'printf %s {text} | wc -c', [req('text')]);
    expect((await call(c, '--text-file ~/n.txt')).body.trim()).toBe('12');
  });

  it('when the file is outside the workspace or reached through a symlink out of it, then FORBIDDEN', async () => {
    expect(await call(a, '--text-file /etc/hostname')).toEqual({ ok: false, code: 'FORBIDDEN', body: 'ERROR(FORBIDDEN): Path outside the workspace: /etc/hostname' });
    symlinkSync('/etc', join(w.home, 'etc-link'));
    expect((await call(a, '--text-file etc-link/hostname')).code).toBe('FORBIDDEN');
  });

  it('when the file is missing, a directory, or over 1 MiB, then the §5.4 texts', async () => {
    mkdirSync(join(w.home, 'adir'), { recursive: true });
    writeFileSync(join(w.home, 'big.txt'), 'x'.repeat(1048577));
    writeFileSync(join(w.home, 'limit.txt'), 'x'.repeat(1048576));
    expect((await call(a, '--text-file nope.txt')).body).toBe('ERROR(INVALID_ARGS): Cannot read --text-file ~/nope.txt: no such file\nRecovery: /act.note --help');
    expect((await call(a, '--text-file adir')).body.split('\n')[0]).toBe('ERROR(INVALID_ARGS): Cannot read --text-file ~/adir: is a directory');
    expect((await call(a, '--text-file big.txt')).body.split('\n')[0]).toBe('ERROR(INVALID_ARGS): --text-file ~/big.txt is too large: 1048577 bytes (limit 1048576)');
    expect((await call(cli('n2', 'true', [req('text')]), '--text-file limit.txt')).ok).toBe(true);
  });

  it('when the file is unreadable, then permission denied', async () => {
    if (process.getuid?.() === 0) return; // root reads everything; the check cannot fail there
    writeFileSync(join(w.home, 'secret.txt'), 'x', { mode: 0o000 });
    expect((await call(a, '--text-file secret.txt')).body.split('\n')[0]).toBe('ERROR(INVALID_ARGS): Cannot read --text-file ~/secret.txt: permission denied');
  });

  it('when the content holds $ or a backtick, then it is refused', async () => {
    writeFileSync(join(w.home, 'd.txt'), 'price $5');
    expect((await call(a, '--text-file d.txt')).body.split('\n')[0]).toBe('ERROR(INVALID_ARGS): --text-file ~/d.txt contains $ or a backtick; file values may not contain them');
  });
});
