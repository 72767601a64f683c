// Helper process of the symlink-swap race (test/fs/swap.int.test.ts): flips <home>/sw between the real
// folder and a symlink to <outside> until <ms> have passed, holding each state for 0–1 ms.
// A PUT may recreate `sw` as a folder while it is briefly missing; such folders are moved aside
// (they are inside the workspace). Prints {"flips": n, "aside": n} at the end.
import { renameSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

const [home, outside, ms] = process.argv.slice(2);
const sw = join(home, 'sw');
const stash = join(home, 'sw.stash');
const hold = new Int32Array(new SharedArrayBuffer(4));
const end = Date.now() + Number(ms);
let flips = 0;
let aside = 0;

const moveAside = () => renameSync(sw, join(home, `aside-${aside++}`));

while (Date.now() < end) {
  renameSync(sw, stash);
  for (;;) {
    try { symlinkSync(outside, sw); break; } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      moveAside();
    }
  }
  flips++;
  Atomics.wait(hold, 0, 0, Math.random());
  unlinkSync(sw);
  for (;;) {
    try { renameSync(stash, sw); break; } catch (err) {
      if (!['ENOTEMPTY', 'EEXIST', 'EISDIR', 'ENOTDIR'].includes(err.code)) throw err;
      moveAside();
    }
  }
  flips++;
  Atomics.wait(hold, 0, 0, Math.random());
}
process.stdout.write(JSON.stringify({ flips, aside }));
