// Baseline of bench/bash: a bare node-pty loop in one process running the persistent-shell protocol of
// behaviour.md §8.3 (bench/bash-bare-shell.mjs), nothing else. Usage: node bench/bash-bare.mjs <seconds>
// Prints one JSON line: {"n": <commands>, "ms": <elapsed>}.
import { openBareShell } from './bash-bare-shell.mjs';

const seconds = Number(process.argv[2] ?? 5);
const shell = await openBareShell();
let n = 0;
const start = performance.now();
const end = start + seconds * 1000;
while (performance.now() < end) {
  const out = await shell.run('echo hi');
  if (out.toString() !== 'hi\n') throw new Error(`unexpected output ${JSON.stringify(out.toString())}`);
  n++;
}
const ms = performance.now() - start;
shell.close();
console.log(JSON.stringify({ n, ms }));
process.exit(0);
