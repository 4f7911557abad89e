import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as vscode from 'vscode';
import { HeatNode } from '../../src/protocol';
import { decorationFor, HeatDecorations, heatBand, HeatStore } from '../../src/views/heat';

function node(path: string, heat: number, lastAction: HeatNode['lastAction'] = 'read'): HeatNode {
  return { path, heat, inContext: true, lastAction, turn: 1 };
}

describe('HeatStore', () => {
  it('holds updates that arrive before the snapshot and applies the newer ones over it', () => {
    const s = new HeatStore();
    assert.deepEqual(s.update({ seq: 3, updates: [node('a.go', 0.5)], removed: [] }), []);
    assert.deepEqual(s.update({ seq: 4, updates: [], removed: ['b.go'] }), []);
    const changed = s.snapshot({ seq: 3, nodes: [node('b.go', 0.9), node('c.go', 0.1)] });
    assert.deepEqual(changed.sort(), ['b.go', 'c.go']);
    assert.equal(s.get('a.go'), undefined, 'seq 3 is already in the snapshot');
    assert.equal(s.get('b.go'), undefined, 'seq 4 removed it after the snapshot');
    assert.equal(s.get('c.go')?.heat, 0.1);
  });

  it('drops an update at or below the last seq', () => {
    const s = new HeatStore();
    s.snapshot({ seq: 5, nodes: [] });
    assert.deepEqual(s.update({ seq: 5, updates: [node('a.go', 1)], removed: [] }), []);
    assert.deepEqual(s.update({ seq: 6, updates: [node('a.go', 1)], removed: [] }), ['a.go']);
    assert.equal(s.get('a.go')?.heat, 1);
  });

  it('ignores a task\'s own heat view: the explorer shows the workspace', () => {
    const s = new HeatStore();
    s.snapshot({ seq: 0, nodes: null });
    assert.deepEqual(s.update({ taskId: 't1', seq: 1, updates: [node('a.go', 1)], removed: [] }), []);
    assert.equal(s.get('a.go'), undefined);
  });

  it('reports every path a new snapshot changes, including the ones it drops', () => {
    const s = new HeatStore();
    s.snapshot({ seq: 1, nodes: [node('old.go', 0.4)] });
    assert.deepEqual(s.snapshot({ seq: 2, nodes: [node('new.go', 0.4)] }).sort(), ['new.go', 'old.go']);
  });

  it('forgets everything on reset and waits for a new snapshot', () => {
    const s = new HeatStore();
    s.snapshot({ seq: 9, nodes: [node('a.go', 0.4)] });
    assert.deepEqual(s.reset(), ['a.go']);
    assert.deepEqual(s.update({ seq: 1, updates: [node('b.go', 1)], removed: null }), [], 'held until the next snapshot');
    s.snapshot({ seq: 0, nodes: [] });
    assert.equal(s.get('b.go')?.heat, 1);
  });
});

describe('heat decorations', () => {
  it('bands heat into cool, warm and hot', () => {
    assert.deepEqual([0, 0.32, 0.33, 0.66, 0.67, 1].map(heatBand), ['cool', 'cool', 'warm', 'warm', 'hot', 'hot']);
  });

  it('badges a file with its heat in tenths and colours it by band', () => {
    const d = decorationFor(node('a.go', 0.84, 'write'));
    assert.equal(d.badge, '8');
    assert.equal((d.color as unknown as { id: string }).id, 'agentls.heat.hot');
    assert.match(d.tooltip ?? '', /heat 0\.84, written, in the model's context/);
    assert.equal(d.propagate, false);
  });

  it('never shows a zero badge for a barely warm file', () => {
    assert.equal(decorationFor(node('a.go', 0.01)).badge, '1');
  });

  it('marks a blocked access with !', () => {
    assert.equal(decorationFor(node('secret.env', 0.5, 'blocked')).badge, '!');
  });

  it('says in words every action agentls reports, a file the prompt names and one an MCP tool named included', () => {
    assert.match(decorationFor(node('main.go', 0.5, 'userReferenced')).tooltip ?? '', /heat 0\.50, named in your prompt,/);
    assert.match(decorationFor(node('notes.md', 0.5, 'mcp')).tooltip ?? '', /heat 0\.50, named by an MCP tool,/);
  });

  it('decorates files of the workspace by their relative path and nothing outside it', () => {
    const root = vscode.Uri.file('/ws');
    const deco = new HeatDecorations(new HeatStore(), () => root);
    const fired: string[][] = [];
    deco.onDidChangeFileDecorations((uris) => fired.push(uris.map((u) => u.path)));
    deco.applySnapshot({ seq: 1, nodes: [node('src/a b.go', 0.9)] });
    assert.deepEqual(fired, [['/ws/src/a b.go']]);
    assert.equal(deco.provideFileDecoration(vscode.Uri.parse('file:///ws/src/a%20b.go'))?.badge, '9');
    assert.equal(deco.provideFileDecoration(vscode.Uri.file('/ws2/src/a b.go')), undefined);
    assert.equal(deco.provideFileDecoration(vscode.Uri.parse('untitled:///ws/src/a%20b.go')), undefined);
    deco.applyUpdate({ seq: 2, updates: [], removed: ['src/a b.go'] });
    assert.equal(deco.provideFileDecoration(vscode.Uri.file('/ws/src/a b.go')), undefined);
    assert.equal(fired.length, 2);
  });
});
