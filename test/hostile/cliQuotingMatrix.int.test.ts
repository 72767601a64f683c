import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { substituteCommand } from '../../src/sfmd/shellQuote.js';

/**
 * Every quoting context a CLI template can give a placeholder × every class of
 * hostile value. Each substituted command really runs under bash; a marker file that a successful
 * injection would create must never exist. Plain contexts print exactly the value; contexts where
 * bash evaluates the text a second time (arithmetic, variable names) accept numbers (or names) and
 * refuse everything else with the evaluation rule's message (behaviour.md §4.8, docs/actions.md).
 */

let dir = '';
let marker = '';

/** Hostile values; `M` stands for the marker path. */
const PAYLOADS = [
  'a[$(touch M)]', 'a[`touch M`]', 'a[b[$(touch M)]]', 'x[${y:=$(touch M)}]', '$(touch M)', '`touch M`', 'x; touch M',
  'x && touch M', 'x | touch M', 'x\ntouch M', "'; touch M; '", '"; touch M; "', '\\"; touch M #', '${x:=$(touch M)}',
  '<(touch M)', "$'\\x27'; touch M", 'EOF\ntouch M', '1)); touch M; ((1', ']] && touch M; [[ 1', '0]; touch M; a[0',
  'PATH=0', '*', '~', '{a,b}', '-e', '--help', '',
];
/** Values an evaluation context must accept, with what bash computes for `v + 1`. */
const NUMBERS: Array<[string, number]> = [['41', 42], ['-3', -2], ['0x10', 17], ['+7', 8]];

/** Substitute `{v}` (a field) in a template; `$sv` is an exported session variable with the same value. */
function substitute(template: string, value: string) {
  return substituteCommand(template, (ph) => (ph.name === 'v' ? { text: value, label: '--v' } : null), (n) => (n === 'sv' ? { text: value, label: '{sv}' } : null));
}

/** Contexts whose output is exactly the value, once per NUL-terminated record. */
const PLAIN: Array<[string, string, ((v: string) => string)?]> = [
  ['unquoted', "printf '%s\\0' {v}"],
  ['double quotes', "printf '%s\\0' \"{v}\""],
  ['single quotes', "printf '%s\\0' '{v}'"],
  ['$\'…\'', "printf '%s\\0' $'{v}'"],
  ['inside a word', "printf '%s\\0' x{v}y", (v) => `x${v}y`],
  ['$( … )', "printf '%s\\0' \"$(printf '%s' {v})\""],
  ['backticks', "printf '%s\\0' \"`printf '%s' {v}`\""],
  ['$( $( … ) )', "printf '%s\\0' \"$(printf '%s' \"$(printf '%s' {v})\")\""],
  ['assignment', "x={v}; printf '%s\\0' \"$x\""],
  ['quoted assignment', "x=\"{v}\"; printf '%s\\0' \"$x\""],
  ['environment prefix', "V={v} bash -c 'printf \"%s\\0\" \"$V\"'"],
  ['declare', "declare x={v}; printf '%s\\0' \"$x\""],
  ['local', "f() { local x={v}; printf '%s\\0' \"$x\"; }; f"],
  ['export', "export X={v}; bash -c 'printf \"%s\\0\" \"$X\"'"],
  ['for … in', "for x in {v}; do printf '%s\\0' \"$x\"; done"],
  ['case', "case {v} in *) printf '%s\\0' {v};; esac"],
  ['[[ == ]]', "[[ {v} == {v} ]] && printf '%s\\0' {v}"],
  ['[[ -n ]]', "[[ -n {v} || -z {v} ]] && printf '%s\\0' {v}"],
  ['command word', "{v} 2>/dev/null; printf '%s\\0' {v}"],
  ['test =', "test {v} = {v} && printf '%s\\0' {v}"],
  ['[ = ]', "[ {v} = {v} ] && printf '%s\\0' {v}"],
  ['here-string', "cat <<< {v} | head -c -1; printf '\\0'"],
  ['printf argument', "printf '%s\\0' {v} | cat"],
];

/** Contexts where bash evaluates the text: `v + 1` is printed for numbers, the rest must be refused. */
const ARITH: Array<[string, string]> = [
  ['$(( ))', "printf '%s\\0' $(( {v} + 1 ))"],
  ['$(( "…" ))', "printf '%s\\0' $(( \"{v}\" + 1 ))"],
  ['$[ ]', "printf '%s\\0' $[ {v} + 1 ]"],
  ['(( ))', "(( x = {v} + 1 )); printf '%s\\0' $x"],
  ['for (( ))', "for (( i = {v}; i < {v} + 1; i++ )); do printf '%s\\0' $(( i + 1 )); done"],
  ['let', "let x={v}+1; printf '%s\\0' $x"],
  ['let "…"', "let \"x = {v} + 1\"; printf '%s\\0' $x"],
  ['[[ -eq ]]', "[[ {v} -eq {v} ]] && printf '%s\\0' $(( {v} + 1 ))"],
  ['[[ "…" -gt ]]', "[[ 100 -gt \"{v}\" ]] && printf '%s\\0' $(( {v} + 1 ))"],
  ['array subscript', "a=(); a[{v}+5]=x; printf '%s\\0' $(( {v} + 1 ))"],
  ['declare -i', "declare -i n={v}+1; printf '%s\\0' $n"],
  ['declare -i, then assigned', "declare -i n; n={v}+1; printf '%s\\0' $n"],
  ['variable in $(( ))', "n={v}; printf '%s\\0' $(( n + 1 ))"],
  ['"$variable" in $(( ))', "n=\"{v}\"; printf '%s\\0' $(( \"$n\" + 1 ))"],
  ['variable in (( ))', "n={v}; (( n = n + 1 )); printf '%s\\0' $n"],
  ['variable in [[ -eq ]]', "n={v}; [[ $n -eq $n ]] && printf '%s\\0' $(( n + 1 ))"],
  ['variable as subscript', "n={v}; a=(); a[n+5]=1; printf '%s\\0' $(( n + 1 ))"],
  ['loop variable', "for n in {v}; do printf '%s\\0' $(( n + 1 )); done"],
  ['read <<<', "read -r n <<< {v}; printf '%s\\0' $(( n + 1 ))"],
  ['read here-document', "read -r n <<EOF\n{v}\nEOF\nprintf '%s\\0' $(( n + 1 ))"],
  ['printf -v', "printf -v n '%s' {v}; printf '%s\\0' $(( n + 1 ))"],
  ['positional parameter', "f() { printf '%s\\0' $(( $1 + 1 )); }; f {v}"],
  ['session variable $sv', "printf '%s\\0' $(( sv + 1 ))"],
];

/** Contexts where bash reads the text as a variable name. */
const NAMES: Array<[string, string]> = [
  ['[[ -v ]]', "[[ -v {v} ]]; printf 'done\\0'"],
  ['test -v', "test -v {v}; printf 'done\\0'"],
  ['printf -v', "printf -v {v} x; printf 'done\\0'"],
  ['read name', "read -r {v} <<< x; printf 'done\\0'"],
  ['declare name', "declare {v}=1; printf 'done\\0'"],
  ['${!x}', "x={v}; : \"${!x}\"; printf 'done\\0'"],
  ['declare -n', "declare -n r={v}; : \"$r\"; printf 'done\\0'"],
];

/** Contexts that are evaluated only through a command's output: `[` is refused, other text passes. */
const OUTPUT: Array<[string, string]> = [
  ['$( ) inside $(( ))', "printf '%s\\0' $(( $(printf '%s' {v} | wc -c) * 0 + 1 ))"],
  ['$( ) assigned, then $(( ))', "n=$(printf '%s' {v} | wc -c); printf '%s\\0' $(( n * 0 + 1 ))"],
];

/** One case of the matrix: the substitution and, once run, its output and whether it injected. */
interface Case {
  value: string;
  result: ReturnType<typeof substitute>;
  sv?: string;
  out: string[];
  injected: boolean;
}

const HEREDOCS = ["cat <<EOF\n{v}\nEOF", "cat <<'EOF'\n{v}\nEOF", "cat <<-EOF\n\t{v}\nEOF", 'true # {v}'];
const cases = new Map<string, Case[]>();
let nextMarker = 0;

/** Cases of one template over raw payloads (M → a marker of its own); `sv` also gets the value. */
function plan(key: string, template: string, raws: string[], withSv = false): void {
  cases.set(key, raws.map((raw) => {
    const value = raw.replace(/M/g, `${marker}-${nextMarker++}`);
    return { value, result: substitute(template, value), sv: withSv ? value : undefined, out: [], injected: false };
  }));
}

/**
 * Run every accepted case once, each in its own subshell of one driver bash (`eval` parses it
 * there, so a syntax error stays in its case); spawning a bash per case from jest is far slower.
 * Refused cases are not run: Loom would not run them either.
 */
function runAll(): void {
  const all = [...cases.values()].flat().filter((c) => c.result.ok);
  const input = all.map((c) => `${c.sv ?? ''}\0${c.result.ok ? c.result.command : ''}\0`).join('');
  const driver = 'while IFS= read -r -d "" sv && IFS= read -r -d "" c; do (export sv; eval -- "$c") </dev/null 2>/dev/null; printf "\\001"; done';
  const r = spawnSync('/bin/bash', ['-c', driver], { cwd: dir, input, encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, timeout: 240000 });
  const parts = r.stdout.split('\u0001');
  all.forEach((c, i) => { c.out = (parts[i] ?? '').split('\0').slice(0, -1); });
  for (const c of [...cases.values()].flat()) {
    const m = c.value.indexOf(`${marker}-`);
    c.injected = m >= 0 && existsSync(/^[^\s`)'";\]}]+/.exec(c.value.slice(m))?.[0] ?? '');
  }
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'loom-quoting-'));
  marker = join(dir, 'pwned');
  for (const [name, template] of PLAIN) plan(`plain ${name}`, template, PAYLOADS);
  for (const [name, template] of ARITH) {
    plan(`arith ${name}`, template, PAYLOADS, true);
    plan(`number ${name}`, template, NUMBERS.map(([n]) => n), true);
  }
  for (const [name, template] of NAMES) plan(`name ${name}`, template, ['loom_var', ...PAYLOADS]);
  for (const [name, template] of OUTPUT) plan(`output ${name}`, template, PAYLOADS);
  for (const template of HEREDOCS) plan(`heredoc ${template}`, template, [...PAYLOADS, 'a\0b']);
  // Control: `eval` runs its argument as code (documented: Loom guarantees the word, not what a
  // program does with it), so this injection must be seen; it proves the harness detects one.
  plan('control', 'eval {v}', ['touch M']);
  runAll();
}, 240000);
afterAll(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

const show = (c: Case) => JSON.stringify(c.value.split(marker).join('M').replace(/M-\d+/g, 'M'));

describe('CLI quoting matrix (context × hostile value, marker never created)', () => {
  it('runs the whole matrix, and sees an injection where one happens (eval, the control)', () => {
    expect([...cases.values()].flat().length).toBeGreaterThan(1000);
    expect(cases.get('control')?.[0]).toMatchObject({ injected: true });
  });

  it.each(PLAIN.map(([name, , expected]) => ({ name, expected })))('in a plain context ($name), every value arrives exactly and nothing is injected', ({ name, expected }) => {
    const failures: string[] = [];
    for (const c of cases.get(`plain ${name}`) ?? []) {
      if (c.injected) failures.push(`${show(c)} created the marker`);
      if (!c.result.ok) { failures.push(`${show(c)} refused: ${c.result.message}`); continue; }
      const want = expected ? expected(c.value) : c.value;
      if (c.out.length === 0 || c.out.some((o) => o !== want)) failures.push(`${show(c)} printed ${JSON.stringify(c.out)}`);
    }
    expect(failures).toEqual([]);
  });

  it.each(ARITH.map(([name, template]) => ({ name, template })))('in an arithmetic context ($name), numbers compute and every hostile value is refused', ({ name, template }) => {
    const label = /\bsv\b/.test(template) ? '{sv}' : '--v';
    const failures: string[] = [];
    (cases.get(`number ${name}`) ?? []).forEach((c, k) => {
      if (!c.result.ok) failures.push(`${c.value} refused: ${c.result.message}`);
      else if (c.out[0] !== String(NUMBERS[k][1])) failures.push(`${c.value} printed ${JSON.stringify(c.out)}`);
    });
    for (const c of cases.get(`arith ${name}`) ?? []) {
      const heredocEnd = template.includes('<<') && c.value.split('\n').includes('EOF');
      if (c.injected) failures.push(`${show(c)} created the marker`);
      if (c.result.ok) failures.push(`${show(c)} was not refused`);
      else if (c.result.message !== `Value for ${label} is not a number; the command uses it in arithmetic` && !heredocEnd) failures.push(`${show(c)}: ${c.result.message}`);
    }
    expect(failures).toEqual([]);
  });

  it.each(NAMES.map(([name]) => ({ name })))('in a name context ($name), plain names pass and everything else is refused', ({ name }) => {
    const [ok, ...hostile] = cases.get(`name ${name}`) ?? [];
    const failures: string[] = [];
    if (!ok?.result.ok || ok.out[0] !== 'done') failures.push(`loom_var: ${JSON.stringify(ok)}`);
    for (const c of hostile) {
      if (c.injected) failures.push(`${show(c)} created the marker`);
      if (c.result.ok) failures.push(`${show(c)} was not refused`);
      else if (c.result.message !== 'Value for --v is not a variable name; the command uses it as one') failures.push(`${show(c)}: ${c.result.message}`);
    }
    expect(failures).toEqual([]);
  });

  it.each(OUTPUT.map(([name]) => ({ name })))('where a command\'s output is evaluated ($name), a value with "[" is refused and other values run', ({ name }) => {
    const failures: string[] = [];
    for (const c of cases.get(`output ${name}`) ?? []) {
      if (c.injected) failures.push(`${show(c)} created the marker`);
      if (c.value.includes('[') === c.result.ok) failures.push(`${show(c)}: ${JSON.stringify(c.result)}`);
      else if (!c.result.ok && c.result.message !== 'Value for --v may not contain "[" here: bash evaluates text made from it as arithmetic') failures.push(c.result.message);
      else if (c.result.ok && c.out[0] !== '1') failures.push(`${show(c)} printed ${JSON.stringify(c.out)}`);
    }
    expect(failures).toEqual([]);
  });

  it.each(HEREDOCS)('in here-documents and comments (%j), values stay data (a delimiter line and NUL are refused)', (template) => {
    const failures: string[] = [];
    for (const c of cases.get(`heredoc ${template}`) ?? []) {
      if (c.injected) failures.push(`${show(c)} created the marker`);
      const delimiter = template.includes('<<') && c.value.split('\n').includes('EOF');
      if (c.value.includes('\0') && (c.result.ok || c.result.message !== 'Value for --v contains a NUL byte')) failures.push(`NUL: ${JSON.stringify(c.result)}`);
      if (!c.result.ok && !delimiter && !c.value.includes('\0')) failures.push(`${show(c)}: ${c.result.message}`);
    }
    expect(failures).toEqual([]);
  });
});
