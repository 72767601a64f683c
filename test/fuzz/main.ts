import { fuzzSession } from './session.js';

/**
 * `npm run fuzz -- --seed N --count M`: the long fuzz run, in slices of 5,000 inputs
 * against a fresh daemon each (so one finding does not hide the rest). Exit 1 when anything was found.
 */
function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isInteger(v) || v < 0) {
    process.stderr.write(`fuzz: --${name} needs a whole number\n`);
    process.exit(2);
  }
  return v;
}

const seed = arg('seed', 12);
const count = arg('count', 2000);
const SLICE = 5000;
let sent = 0;
let retried = 0;
const findings: string[] = [];
const statuses: Record<string, number> = {};
const started = Date.now();
for (let done = 0, slice = 0; done < count; done += SLICE, slice++) {
  const n = Math.min(SLICE, count - done);
  const r = await fuzzSession(seed + slice, n);
  sent += r.sent;
  retried += r.retried;
  findings.push(...r.findings);
  for (const [k, v] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
  const inside = r.inside.skipped ? `confined agent skipped: ${r.inside.skipped}` : `${r.inside.sent} from a confined agent`;
  process.stdout.write(`slice ${slice} (seed ${seed + slice}): ${r.sent}/${n} sent, ${inside}, ${r.findings.length} findings\n`);
}
process.stdout.write(`fuzz: seed ${seed}, ${sent} inputs in ${Math.round((Date.now() - started) / 1000)} s, ${findings.length} findings, ${retried} re-sent after a dropped connection\n${JSON.stringify(statuses)}\n`);
for (const f of findings.slice(0, 50)) process.stdout.write(`- ${f}\n`);
process.exit(findings.length > 0 ? 1 : 0);
