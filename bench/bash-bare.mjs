// Baseline of bench/bash: a bare node-pty loop in one process running the persistent-shell protocol of
// behaviour.md §8.3 (bench/bash-bare-shell.mjs), nothing else.
// Usage: node bench/bash-bare.mjs <seconds>: one run, prints one JSON line {"n": <commands>, "ms": <elapsed>}.
//        node bench/bash-bare.mjs serve: prints `ready`, then for each line `<ms>` read from stdin runs the
//        loop that long on the same shell and prints {"n", "ms"} (bench/bash's one-second slices).
import { createInterface } from 'node:readline';
import { openBareShell } from './bash-bare-shell.mjs';

const shell = await openBareShell();

/** Run `echo hi` back to back for `ms`; the count and the exact elapsed time. */
async function loop(ms) {
  let n = 0;
  const start = performance.now();
  const end = start + ms;
  while (performance.now() < end) {
    const out = await shell.run('echo hi');
    if (out.toString() !== 'hi\n') throw new Error(`unexpected output ${JSON.stringify(out.toString())}`);
    n++;
  }
  return { n, ms: performance.now() - start };
}

if (process.argv[2] === 'serve') {
  console.log('ready');
  for await (const line of createInterface({ input: process.stdin })) console.log(JSON.stringify(await loop(Number(line))));
  shell.close();
  process.exit(0);
}
const r = await loop(Number(process.argv[2] ?? 5) * 1000);
shell.close();
console.log(JSON.stringify(r));
process.exit(0);
