import { readFileSync } from 'node:fs';
import { parseDocument } from './src/sfmd/parse.js';
const d = parseDocument(readFileSync(process.argv[2], 'utf8'));
console.log(d.rendered);
console.log('=====');
console.log(JSON.stringify({ ...d, rendered: undefined, source: undefined, renderLines: undefined, frontmatter: undefined }, null, 1).slice(0, +(process.argv[3] ?? 3000)));
