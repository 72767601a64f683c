// bench/history-ring: the history ring's own cost per command, in nanoseconds, to set beside the
// daemon CPU per /exec request that bench/inspector reports. One /help command makes three snapshots
// of its topic (two of them state changes: idle → executing → idle); this replays that on 16 topics
// among 5,000 started ones, against the same loop with no history call (the loop's own cost).
// Run: npm run build && node bench/history-ring.mjs
import { TopicHistories } from '../dist/services/topicHistory.js';

const N = 2_000_000;
const now = () => Date.now();
const ids = Array.from({ length: 16 }, (_, i) => `a${i}/t`);
const h = new TopicHistories();
for (let i = 0; i < 5000; i++) h.started(`a${i}/t`, 'idle', now());
let sink = 0;

function withHistory() {
  for (let i = 0; i < N; i++) {
    const id = ids[i & 15];
    h.snapshot(id, 'executing', 'command.arrive', now);
    h.snapshot(id, 'executing', 'command.output', now);
    h.snapshot(id, 'idle', 'command.done', now);
  }
}
function loopOnly() {
  for (let i = 0; i < N; i++) sink += ids[i & 15].length + now() % 2;
}
function time(f) {
  const t0 = process.hrtime.bigint();
  f();
  return Number(process.hrtime.bigint() - t0) / N;
}

const rows = [];
for (let round = 0; round < 5; round++) rows.push([time(loopOnly), time(withHistory)]);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = median(rows.map((r) => r[0]));
const full = median(rows.map((r) => r[1]));
console.log(`loop alone ${base.toFixed(0)} ns, with the three history snapshots ${full.toFixed(0)} ns: the ring costs ${(full - base).toFixed(0)} ns per command (node ${process.version}, sink ${sink % 7})`);
