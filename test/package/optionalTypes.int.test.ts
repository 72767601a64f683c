import { describe, expect, it } from '@jest/globals';
import { join, sep } from 'node:path';
import ts from 'typescript';

/*
 * behaviour.md §17: a source checkout builds without a C++ toolchain, where npm has removed the
 * optional node-pty (its binding could not be compiled). The type-check must not need its files:
 * this runs the project's own type-check (tsconfig.json: src and test) with node-pty hidden from
 * the compiler, as such a checkout has it.
 */
describe('the type-check without node-pty installed (behaviour.md §17)', () => {
  it('when node_modules/node-pty does not exist, then tsc still reports no error', () => {
    const root = process.cwd();
    const hidden = join(root, 'node_modules', 'node-pty');
    const visible = (p: string) => p !== hidden && !p.startsWith(hidden + sep);
    const configFile = ts.readConfigFile(join(root, 'tsconfig.json'), (p) => ts.sys.readFile(p));
    const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root);
    const host = ts.createCompilerHost({ ...parsed.options, noEmit: true });
    const fileExists = host.fileExists.bind(host);
    const directoryExists = host.directoryExists?.bind(host);
    host.fileExists = (p) => visible(p) && fileExists(p);
    host.directoryExists = (p) => visible(p) && (directoryExists ? directoryExists(p) : true);
    const program = ts.createProgram({ rootNames: parsed.fileNames, options: { ...parsed.options, noEmit: true }, host });
    const loadedPty = program.getSourceFiles().filter((f) => !visible(f.fileName)).map((f) => f.fileName);
    const errors = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n') + (d.file ? ` (${d.file.fileName})` : ''));
    expect(loadedPty).toEqual([]);
    expect(errors).toEqual([]);
  });
});
