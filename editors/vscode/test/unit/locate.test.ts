import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as vscode from 'vscode';
import { definitions, LocateDeps, locations, PlaceLike, RangeLike, references } from '../../src/handlers/locate';

function range(line: number, from: number, to: number): RangeLike {
  return { start: { line, character: from }, end: { line, character: to } };
}

/** deps whose providers answer from tables, recording what they were asked. */
function deps(refs: readonly PlaceLike[] | undefined, defs: readonly PlaceLike[] | undefined): { d: LocateDeps; asked: string[] } {
  const asked: string[] = [];
  const d: LocateDeps = {
    references: (uri, line, character) => {
      asked.push(`references ${uri.toString()} ${line}:${character}`);
      return Promise.resolve(refs);
    },
    definitions: (uri, line, character) => {
      asked.push(`definitions ${uri.toString()} ${line}:${character}`);
      return Promise.resolve(defs);
    },
    parseUri: (u) => vscode.Uri.parse(u, true),
  };
  return { d, asked };
}

describe('agent/references and agent/definition', () => {
  const at = { textDocument: { uri: 'file:///ws/one/reader.go' }, position: { line: 2, character: 5 } };

  it('asks VS Code\'s providers at the place agentls names and answers their places as the protocol\'s', async () => {
    const decl = vscode.Uri.parse('file:///ws/one/reader.go', true);
    const use = vscode.Uri.parse('file:///ws/use/use.go', true);
    const { d, asked } = deps([{ uri: decl, range: range(2, 5, 11) }, { uri: use, range: range(11, 12, 18) }], undefined);
    assert.deepEqual(await references({ ...at, context: { includeDeclaration: true } }, d), [
      { uri: 'file:///ws/one/reader.go', range: { start: { line: 2, character: 5 }, end: { line: 2, character: 11 } } },
      { uri: 'file:///ws/use/use.go', range: { start: { line: 11, character: 12 }, end: { line: 11, character: 18 } } },
    ]);
    assert.deepEqual(asked, ['references file:///ws/one/reader.go 2:5']);
  });

  it('answers a definition\'s LocationLink as its target\'s name', async () => {
    const target = vscode.Uri.parse('file:///ws/one/reader.go', true);
    const { d } = deps(undefined, [{ targetUri: target, targetRange: range(6, 0, 24), targetSelectionRange: range(6, 16, 20) }]);
    assert.deepEqual(await definitions(at, d), [
      { uri: 'file:///ws/one/reader.go', range: { start: { line: 6, character: 16 }, end: { line: 6, character: 20 } } },
    ]);
  });

  it('answers null when no provider serves the document', async () => {
    const { d } = deps([], undefined);
    assert.equal(await references({ ...at, context: { includeDeclaration: true } }, d), null);
    assert.equal(await definitions(at, d), null);
  });

  it('leaves out what is no place', () => {
    assert.deepEqual(locations([{ targetUri: vscode.Uri.parse('file:///x', true) }, {}]), []);
  });
});
