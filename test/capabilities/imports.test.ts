import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';

/**
 * architecture.md dependency rule for this modules: http and actors never import concrete
 * stores or effects (the feature wires them through domain ports); domain imports nothing from src.
 */
const FILES: Array<[string, RegExp]> = [
  ['src/http/routes/fs.ts', /\/(effects|stores)\//],
  ['src/http/routes/capabilities.ts', /\/(effects|stores)\//],
  ['src/http/fsTransfer.ts', /\/(effects|stores)\//],
  ['src/services/capabilities.ts', /\/(effects|stores|http)\//],
  ['src/machines/capability.ts', /^\.\.?\/(?!.*domain)/],
  ['src/domain/capability.ts', /^\.\.\//],
  ['src/domain/fsPath.ts', /^\.\.\//],
  ['src/domain/fsPlane.ts', /^\.\.\//],
  ['src/cli/capability.ts', /\/(actors|http|effects|stores|machines|features)\//],
];

const imports = (file: string): string[] =>
  [...readFileSync(file, 'utf8').matchAll(/^import[^'"]*['"]([^'"]+)['"]/gm)].map((m) => m[1]);

describe('dependency rule (architecture.md) for the capability and /fs modules', () => {
  it.each(FILES)('when %s is read, then no import matches %s', (file, forbidden) => {
    const bad = imports(file).filter((spec) => spec.startsWith('.') && forbidden.test(spec));
    expect(bad).toEqual([]);
  });
});
