import { setFlagsFromString } from 'node:v8';

/*
 * Keep V8's young generation at its initial 1 MiB semi-spaces instead of letting it grow to 16 MiB
 * each (a side-effect module: src/cli/main.ts imports it alone and loads the rest of the program
 * dynamically afterwards, because parsing the module graph is what makes V8 grow the space).
 *
 * Why: the daemon forks itself for every CLI action and /exec. fork copies the page tables of all
 * resident memory, the child tears them down again at exec, and the parent then takes a
 * copy-on-write fault on each page it writes: spawn cost grows with resident anonymous memory
 * (about 50 µs per MiB here). 30 MiB of young generation made each CLI action about 1 ms slower
 * (bench/actions); more frequent scavenges of a 1 MiB space cost far less for a daemon whose
 * requests allocate little. The growth factor is read whenever V8 considers growing, so setting it at
 * run time works (--max-semi-space-size is read only when the heap is set up).
 */
setFlagsFromString('--semi-space-growth-factor=1');
