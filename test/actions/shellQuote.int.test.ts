import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { quoteDouble, quoteSingle, quoteUnquoted, referencedNames, substituteCommand } from '../../src/sfmd/shellQuote.js';
import type { Placeholder } from '../../src/sfmd/substitute.js';

/** Substitute with a fixed map of names; unknown names stay. */
function sub(cmd: string, values: Record<string, string>): string {
  const r = substituteCommand(cmd, (ph: Placeholder) => (ph.name in values ? { text: values[ph.name], label: `--${ph.name}` } : null));
  if (!r.ok) throw new Error(r.message);
  return r.command;
}

/** Run a command under bash and split its NUL-separated output. */
function run(cmd: string): string[] {
  const out = execFileSync('/bin/bash', ['-c', cmd], { encoding: 'utf8', env: { ...process.env, HOME: '/home/x' } });
  return out.split('\0').slice(0, -1);
}

const NASTY = [
  "it's", 'say "hi"', '$(id)', '`id`', 'a; rm -rf /tmp/nope', 'line1\nline2', '-rf', '--help', '$HOME ${HOME}', 'back\\slash',
  "mixed '\" $x `y` \\z", '', ' spaced ', '*', '~', '!event', '#hash', 'a\tb', "$'x'", 'EOF',
];

describe('behaviour.md §4.8 quoting rule', () => {
  it('when the spec example runs, then bash sees the value four times', () => {
    const m = `it's "x" $HOME`;
    const cmd = sub(`printf '%s\\0' {m} "{m}" '{m}' v={m}`, { m });
    expect(cmd).toBe(`printf '%s\\0' 'it'\\''s "x" $HOME' "it's \\"x\\" \\$HOME" 'it'\\''s "x" $HOME' v='it'\\''s "x" $HOME'`);
    expect(run(cmd)).toEqual([m, m, m, `v=${m}`]);
  });

  it.each(NASTY)('when the value is %j, then it reaches the command as one literal argument in bare, "…" and \'…\' slots', (v) => {
    expect(run(sub(`printf '%s\\0' {v} "{v}" '{v}' x{v}y "<{v}>" '<{v}>'`, { v }))).toEqual([v, v, v, `x${v}y`, `<${v}>`, `<${v}>`]);
  });

  it.each(NASTY)('when the value is %j inside $( … ), backticks and $\'…\', then it is still literal', (v) => {
    expect(run(sub(`printf '%s\\0' "$(printf '%s' {v})" "\`printf '%s' {v}\`" $'[{v}]' "$(echo "{v}" | cat)"`, { v }))).toEqual([v, v, `[${v}]`, v.replace(/\n+$/, '')]);
  });

  it('when a value is safe, then it is inserted bare; empty becomes \'\'', () => {
    expect(quoteUnquoted('owner/repo-1.2:x@y%z+=,')).toBe('owner/repo-1.2:x@y%z+=,');
    expect(quoteUnquoted('')).toBe("''");
    expect(quoteUnquoted('a b')).toBe("'a b'");
    expect(quoteDouble('a"$`\\')).toBe('a\\"\\$\\`\\\\');
    expect(quoteSingle("a'b")).toBe("a'\\''b");
  });

  it('when {{…}}, $(…), %{…}, ${…} and unknown braces appear, then they reach bash untouched', () => {
    const cmd = `gh x --template '{{range .}}{{.title}}{{"\\n"}}{{end}}' -w '%{http_code}' {'q': 1} $(date) \${v} {nope} {v}`;
    expect(sub(cmd, { v: 'V', http_code: 'NO' })).toBe(`gh x --template '{{range .}}{{.title}}{{"\\n"}}{{end}}' -w '%{http_code}' {'q': 1} $(date) \${v} {nope} V`);
  });

  it('when a placeholder uses [N], then the lookup receives the index', () => {
    const r = substituteCommand('view {issue[1]} --repo {issue[0]}', (ph) => ({ text: ph.index === 1 ? '31' : 'o/r', label: '--issue' }));
    expect(r).toEqual({ ok: true, command: 'view 31 --repo o/r' });
  });

  it('when a value sits in an unquoted here-document, then $, ` and \\ are escaped', () => {
    const v = 'cost $5 `id` \\n';
    expect(run(sub(`cat <<EOF | tr '\\n' '\\0'\n{v}\nEOF`, { v }))).toEqual([v]);
  });

  it('when a value sits in a quoted here-document, then it is raw', () => {
    const v = 'cost $5 `id`';
    expect(run(sub(`cat <<'EOF' | tr '\\n' '\\0'\n{v}\nEOF\n`, { v }))).toEqual([v]);
  });

  it('when a value line equals the here-document delimiter, then INVALID_ARGS', () => {
    const r = substituteCommand(`cat <<'EOF'\n{v}\nEOF`, () => ({ text: 'a\nEOF\nrm -rf x', label: '--v' }));
    expect(r).toEqual({ ok: false, message: 'Value for --v would end the here-document' });
    const u = substituteCommand(`cat <<-END\n\t{v}\nEND`, () => ({ text: '\t\tEND', label: '--v' }));
    expect(u).toEqual({ ok: false, message: 'Value for --v would end the here-document' });
  });

  it('when a value contains NUL, then INVALID_ARGS names the field', () => {
    expect(substituteCommand('echo {v}', () => ({ text: 'a\0b', label: '--v' }))).toEqual({ ok: false, message: 'Value for --v contains a NUL byte' });
  });

  it('when a placeholder sits in a comment, then its line breaks cannot end the comment', () => {
    expect(run(sub(`printf '%s\\0' ok # note {v}`, { v: "x\nprintf 'pwned\\0'" }))).toEqual(['ok']);
  });

  it('when a value sits in $(( … )), then a number works and anything else cannot inject', () => {
    expect(run(sub(`printf '%s\\0' $(( {n} + 1 ))`, { n: '41' }))).toEqual(['42']);
  });

  it('when the command references $name / ${name}, then those names are reported for export', () => {
    expect([...referencedNames('echo $a ${b} ${c:-x} $$ {d} $1')].sort()).toEqual(['a', 'b', 'c']);
  });
});
