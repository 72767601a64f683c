// Redaction cost per command: what the inspector, traces and the request log pay for masking
// secrets by shape (capability secrets, webhook tokens/URLs, Authorization headers, GitHub tokens,
// URL user-info, credential query values, each also percent-encoded) on top of masking known
// values. Pure functions from dist/, timed in this process.
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { median, root, writeResult } from './common.mjs';

const { redactCommand, compileMasks, envMask } = await import(join(root, 'dist/domain/redact.js'));
const { maskShapes } = await import(join(root, 'dist/domain/secretShapes.js'));
const loadAtStart = loadavg().map((x) => x.toFixed(2)).join(', ');

const caps = `caps_${'Q7'.repeat(21)}x`;
const wh = `wh_${'k'.repeat(43)}`;
const cases = [
  ['`/open ~/apps/weather.md` (no secret, no hint of one)', '/open ~/apps/weather.md'],
  ['`/act.search --q "rust async" --limit 5` (no secret)', '/act.search --q "rust async" --limit 5'],
  ['`/exec curl … /webhook/wh_…` (webhook URL)', `/exec curl -s -X POST http://127.0.0.1:3923/webhook/${wh} -d done`],
  ['`/exec curl -H "Authorization: Bearer …" …` and a `ghp_` token', `/exec curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig" -H "X-Gh: ghp_${'a1'.repeat(18)}" https://api.example`],
  ['`/exec echo caps_…` with a 300-character line', `/exec echo ${caps} ${'x'.repeat(250)}`],
  ['`/open https://…/?q=%20caps%5F…` (percent-encoded secret)', `/open https://docs.example/a%20b/page.md?q=%20caps%5F${'Q7'.repeat(21)}x`],
  ['`/install https://deploy:…@host/…?access_token=…` (user-info, query value)', `/install https://deploy:pw-${'z9'.repeat(10)}@git.example/o/r.md?ref=main&access_token=${'t0'.repeat(12)}`],
];
const masks = compileMasks([['s3cret-value-123', envMask('TOKEN')], ['another-secret-9', envMask('OTHER')]]);

const N = 200_000;
const ROUNDS = 7;
/** ns per call of fn over text: median of ROUNDS rounds of N calls. */
function ns(fn, text) {
  let sink = 0;
  for (let i = 0; i < 20_000; i++) sink += fn(text).length; // warm-up
  const per = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < N; i++) sink += fn(text).length;
    per.push(Number(process.hrtime.bigint() - t0) / N);
  }
  if (sink < 0) console.log(sink);
  return median(per);
}

const rows = cases.map(([label, cmd]) => {
  const shapes = ns(maskShapes, cmd);
  const full = ns((t) => redactCommand(t), cmd);
  const withValues = ns((t) => redactCommand(t, masks), cmd);
  return `| ${label} | ${shapes.toFixed(0)} | ${full.toFixed(0)} | ${withValues.toFixed(0)} |`;
});

writeResult('redact', 'Redaction cost per command', `
${N.toLocaleString('en')} calls per round, ${ROUNDS} rounds, median ns per call; load average at start ${loadAtStart}.
\`redactCommand\` is what the inspector runs once per command (first line, \`/set\` mask, shapes, cut to
200 characters); "with 2 known values" adds an agent's env-store values. \`maskShapes\` alone is the
part the secret shapes add.

| command | maskShapes ns | redactCommand ns | redactCommand with 2 known values ns |
|---|---|---|---|
${rows.join('\n')}
`);
