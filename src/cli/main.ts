#!/usr/bin/env node
/*
 * The `loom` executable. It only tunes V8 and then loads the program: ES modules are all parsed
 * before any of them runs, so anything imported statically here would allocate before the tuning
 * (see heapTuning.ts).
 */
import './heapTuning.js';

const { main } = await import('./program.js');
await main(process.argv.slice(2));
