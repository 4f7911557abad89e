// Loaded with `node --require` before the unit tests: makes
// `require('vscode')` resolve to the stub beside this file.
import Module from 'node:module';
import * as path from 'node:path';

const stub = path.join(__dirname, 'vscode.js');
type Resolve = (request: string, ...rest: unknown[]) => string;
const m = Module as unknown as { _resolveFilename: Resolve };
const original = m._resolveFilename;
m._resolveFilename = function (request: string, ...rest: unknown[]): string {
  if (request === 'vscode') {
    return stub;
  }
  return original.call(this, request, ...rest);
};
