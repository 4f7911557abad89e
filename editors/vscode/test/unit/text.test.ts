import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyTextEdits, EditError, plainText, relativePaths } from '../../src/text';

const folders = [{ path: '/home/me/project', name: 'project' }, { path: '/home/me/project/web', name: 'web' }];

describe('messages as plain text', () => {
  const cases: [string, string, string][] = [
    ['names the folder itself by its name', 'agentls wants to run `go test ./...` in /home/me/project', 'agentls wants to run go test ./... in project'],
    ['writes a file of a folder relative to it', 'cannot read /home/me/project/cmd/main.go: gone', 'cannot read cmd/main.go: gone'],
    ['prefers the nested folder', 'see /home/me/project/web/app.ts.', 'see app.ts.'],
    ['leaves a path of another project alone', 'see /home/me/projects/x.go', 'see /home/me/projects/x.go'],
    ['keeps the text of code spans and fences', 'Run ``a `b` c``?\n```sh\nls\n```', 'Run a `b` c?\nls'],
    ['drops bold and star emphasis but keeps snake_case', '**Done**: *all* of my_var_name', 'Done: all of my_var_name'],
  ];
  for (const [name, input, want] of cases) {
    it(name, () => {
      assert.equal(plainText(input, folders), want);
    });
  }

  it('keeps Markdown when only the paths are made relative', () => {
    assert.equal(relativePaths('`go test` in /home/me/project', folders), '`go test` in project');
  });
});

describe('applying LSP text edits', () => {
  it('applies edits given against the original text, in any order', () => {
    const text = 'one\ntwo\nthree\n';
    const out = applyTextEdits(text, [
      { range: { start: { line: 2, character: 0 }, end: { line: 2, character: 5 } }, newText: 'THREE' },
      { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 3 } }, newText: 'ONE' },
    ]);
    assert.equal(out, 'ONE\ntwo\nTHREE\n');
  });

  it('counts characters in UTF-16 units and lines over \\r\\n', () => {
    const text = 'a😀b\r\nc\r\n';
    assert.equal(applyTextEdits(text, [{ range: { start: { line: 0, character: 3 }, end: { line: 0, character: 4 } }, newText: 'B' }]), 'a😀B\r\nc\r\n');
    assert.equal(applyTextEdits(text, [{ range: { start: { line: 1, character: 0 }, end: { line: 1, character: 1 } }, newText: 'C' }]), 'a😀b\r\nC\r\n');
  });

  it('clamps a position past its line or past the end, as VS Code does', () => {
    assert.equal(applyTextEdits('ab\ncd', [{ range: { start: { line: 0, character: 9 }, end: { line: 0, character: 9 } }, newText: '!' }]), 'ab!\ncd');
    assert.equal(applyTextEdits('ab\n', [{ range: { start: { line: 5, character: 0 }, end: { line: 5, character: 0 } }, newText: 'x\n' }]), 'ab\nx\n');
  });

  it('keeps inserts at one place in their order', () => {
    const at = { line: 0, character: 0 };
    assert.equal(applyTextEdits('', [{ range: { start: at, end: at }, newText: 'a' }, { range: { start: at, end: at }, newText: 'b' }]), 'ab');
  });

  it('refuses overlapping edits', () => {
    assert.throws(() => applyTextEdits('abcdef', [
      { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 3 } }, newText: 'x' },
      { range: { start: { line: 0, character: 2 }, end: { line: 0, character: 4 } }, newText: 'y' },
    ]), EditError);
  });
});
