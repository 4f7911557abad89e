import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as vscode from 'vscode';
import { DiagnosticLike, diagnostics, DiagnosticsDeps, DiagnosticsError, toProtocol } from '../../src/handlers/diagnostics';

function diag(line: number, from: number, to: number, severity: number, message: string, extra: Partial<DiagnosticLike> = {}): DiagnosticLike {
  return { range: { start: { line, character: from }, end: { line, character: to } }, severity, message, ...extra };
}

/** deps over a table of documents' diagnostics, the folder being /ws. */
function deps(table: Record<string, DiagnosticLike[]>): DiagnosticsDeps {
  return {
    of: (uri) => table[uri.path] ?? [],
    all: () => Object.entries(table).map(([p, ds]) => [vscode.Uri.file(p), ds] as const),
    inside: (uri) => uri.scheme === 'file' && uri.path.startsWith('/ws/'),
    parseUri: (u) => vscode.Uri.parse(u, true),
    onDidChange: () => ({ dispose: () => undefined }),
  };
}

describe('agent/diagnostics', () => {
  const table = {
    '/ws/main.go': [diag(5, 25, 29, 0, 'undefined: name', { source: 'compiler', code: 'UndeclaredName' })],
    '/ws/util.go': [diag(0, 0, 1, 1, 'unused', { code: { value: 'SA4006', target: 'https://staticcheck.dev' } }), diag(2, 0, 1, 3, 'hint', { code: 2304, source: '' })],
    '/ws/clean.go': [],
    '/elsewhere/x.go': [diag(0, 0, 1, 0, 'not ours')],
  };

  it('answers the named documents\' diagnostics as LSP\'s, severities counted from 1', () => {
    assert.deepEqual(diagnostics({ uris: ['file:///ws/main.go', 'file:///ws/clean.go', 'file:///elsewhere/x.go'] }, deps(table)), {
      items: [{ uri: 'file:///ws/main.go', diagnostics: [
        { range: { start: { line: 5, character: 25 }, end: { line: 5, character: 29 } }, severity: 1, message: 'undefined: name', code: 'UndeclaredName', source: 'compiler' },
      ] }],
    });
  });

  it('answers every document of the folder that has some when none is named', () => {
    for (const params of [undefined, null, {}, { uris: [] }]) {
      const got = diagnostics(params, deps(table));
      assert.deepEqual(got.items?.map((i) => i.uri), ['file:///ws/main.go', 'file:///ws/util.go'], JSON.stringify(params));
    }
  });

  it('reads a code with a link as its value and a number as its digits; an empty source is none', () => {
    assert.deepEqual(toProtocol(table['/ws/util.go'][0]), { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } }, severity: 2, message: 'unused', code: 'SA4006' });
    assert.deepEqual(toProtocol(table['/ws/util.go'][1]), { range: { start: { line: 2, character: 0 }, end: { line: 2, character: 1 } }, severity: 4, message: 'hint', code: '2304' });
  });

  it('leaves out what is no URI, and refuses params it cannot read', () => {
    assert.deepEqual(diagnostics({ uris: ['::not a uri'] }, deps(table)), { items: [] });
    assert.throws(() => diagnostics([1], deps(table)), DiagnosticsError);
    assert.throws(() => diagnostics({ uris: [1] }, deps(table)), /uris must be a list of URIs/);
  });
});
