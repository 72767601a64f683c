import { readFileSync } from 'node:fs';
import { execSync } from 'node:child_process';
import { parseDocument, warningLine } from './src/sfmd/parse.js';
const files = execSync('find /work/shared/corpus/apps -name "*.md" | sort').toString().trim().split('\n');
let na = 0, nw = 0;
for (const f of files) {
  const d = parseDocument(readFileSync(f, 'utf8'));
  na += d.actions.length; nw += d.warnings.length;
  console.log(f.replace('/work/shared/corpus/apps/', ''), '|', d.title, '|', d.actions.map((a) => `${a.id}:${a.kind === 'cli' ? 'CLI' : a.method}`).join(' '));
  for (const w of d.warnings) console.log('   ', warningLine(w));
}
console.log(files.length, 'files', na, 'actions', nw, 'warnings');
