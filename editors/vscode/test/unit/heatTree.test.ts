import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as vscode from 'vscode';
import { CodeGraphResult, HeatNode } from '../../src/protocol';
import { HeatStore } from '../../src/views/heat';
import { HeatFolder, HeatTreeNode, HeatTreeProvider, neighbours } from '../../src/views/heatTree';

function node(path: string, heat: number, lastAction: HeatNode['lastAction'] = 'read', turn = 1): HeatNode {
  return { path, heat, inContext: true, lastAction, turn };
}

/**
 * A graph of three Go files: main.go calls greet.go's greet twice (the
 * language server says), greet.go calls util.go once (the graph resolved
 * it), main.go refers to util.go five times (a guess by name).
 */
const greetGraph: CodeGraphResult = {
  nodes: [
    { id: 'greet.go', kind: 'file', path: 'greet.go', language: 'go' },
    { id: 'greet.go#greet', kind: 'function', path: 'greet.go', name: 'greet' },
    { id: 'main.go', kind: 'file', path: 'main.go', language: 'go' },
    { id: 'util.go', kind: 'file', path: 'util.go', language: 'go' },
    { id: 'module:strings', kind: 'module', name: 'strings' },
  ],
  edges: [
    { from: 'greet.go', to: 'greet.go#greet', kind: 'defines' },
    { from: 'greet.go', to: 'module:strings', kind: 'imports' },
    { from: 'greet.go', to: 'util.go', kind: 'references', count: 1, provenance: 'resolved' },
    { from: 'main.go', to: 'greet.go', kind: 'references', count: 2, provenance: 'lsp' },
    { from: 'main.go', to: 'util.go', kind: 'references', count: 5, provenance: 'name' },
  ],
};

class RpcFailure extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

/** A folder whose graph answers are settled by the test. */
function folder(store: HeatStore) {
  const asked: { path: string; resolve(r: CodeGraphResult): void; reject(e: unknown): void }[] = [];
  const f: HeatFolder = {
    key: 'file:///ws',
    name: 'ws',
    uri: vscode.Uri.file('/ws'),
    store,
    graph: (path) => new Promise((resolve, reject) => {
      asked.push({ path, resolve, reject });
    }),
  };
  return { f, asked };
}

/** redrawn resolves when the provider next fires a change. */
function redrawn(p: HeatTreeProvider): Promise<void> {
  return new Promise((resolve) => {
    const d = p.onDidChangeTreeData(() => {
      d.dispose();
      resolve();
    });
  });
}

function labels(p: HeatTreeProvider, nodes: HeatTreeNode[]): string[] {
  return nodes.map((n) => {
    const item = p.getTreeItem(n);
    const label = typeof item.label === 'string' ? item.label : item.label?.label ?? '';
    return item.description !== undefined ? `${label} (${String(item.description)})` : label;
  });
}

describe('neighbours', () => {
  it('reads the files a file references and those that reference it, with their counts and how they were found', () => {
    assert.deepEqual(neighbours(greetGraph, 'greet.go'), {
      references: [{ path: 'util.go', count: 1, provenance: 'resolved' }],
      referencedBy: [{ path: 'main.go', count: 2, provenance: 'lsp' }],
      truncated: false,
    });
  });

  it('takes an answer that does not say how its references were found', () => {
    const old: CodeGraphResult = { ...greetGraph, edges: (greetGraph.edges ?? []).map((e) => ({ from: e.from, to: e.to, kind: e.kind, count: e.count })) };
    assert.deepEqual(neighbours(old, 'greet.go').referencedBy, [{ path: 'main.go', count: 2 }]);
  });

  it('leaves out the edges between two neighbours and those to definitions and modules', () => {
    const n = neighbours(greetGraph, 'util.go');
    assert.deepEqual(n.references, []);
    assert.deepEqual(n.referencedBy, [{ path: 'main.go', count: 5, provenance: 'name' }, { path: 'greet.go', count: 1, provenance: 'resolved' }], 'most references first');
  });

  it('takes an empty answer and a cut one', () => {
    assert.deepEqual(neighbours({ nodes: null, edges: null, truncated: true }, 'a.go'), { references: [], referencedBy: [], truncated: true });
  });
});

describe('the Heat view', () => {
  it('lists the files with heat, hottest first, each opening its file', () => {
    const store = new HeatStore();
    store.snapshot({ seq: 1, nodes: [node('util.go', 0.2), node('greet.go', 0.9, 'write')] });
    const { f, asked } = folder(store);
    const p = new HeatTreeProvider(() => [f]);
    const top = p.getChildren();
    assert.deepEqual(labels(p, top), ['greet.go (heat 0.90, written)', 'util.go (heat 0.20, read)']);
    const item = p.getTreeItem(top[0]);
    assert.equal(item.collapsibleState, vscode.TreeItemCollapsibleState.Collapsed);
    const open = item.command;
    assert.ok(open !== undefined);
    assert.equal(open.command, 'vscode.open');
    assert.deepEqual(open.arguments?.map((u) => (u as vscode.Uri).path), ['/ws/greet.go']);
    assert.equal(item.resourceUri?.path, '/ws/greet.go', 'the explorer\'s heat badge shows on it too');
    assert.equal(asked.length, 0, 'no graph is asked for before a file is unfolded');
  });

  it('asks agentls for a file\'s neighbours when it is unfolded, and shows both directions with their counts', async () => {
    const store = new HeatStore();
    store.snapshot({ seq: 1, nodes: [node('greet.go', 0.9)] });
    const { f, asked } = folder(store);
    const p = new HeatTreeProvider(() => [f]);
    const file = p.getChildren()[0];
    assert.deepEqual(labels(p, p.getChildren(file)), ['Asking agentls for the neighbours… (agentls answers once its code graph is built; the first build of a large workspace takes a while)']);
    assert.deepEqual(asked.map((a) => a.path), ['greet.go']);
    p.getChildren(file);
    assert.equal(asked.length, 1, 'one question while it is being answered');

    const redraw = redrawn(p);
    asked[0].resolve(greetGraph);
    await redraw;
    const groups = p.getChildren(file);
    assert.deepEqual(labels(p, groups), ['References (1 file)', 'Referenced by (1 file)']);
    assert.deepEqual(labels(p, p.getChildren(groups[0])), ['util.go (1 reference · resolved by the graph)']);
    const callers = p.getChildren(groups[1]);
    assert.deepEqual(labels(p, callers), ['main.go (2 references · language server)']);
    const main = p.getTreeItem(callers[0]);
    assert.deepEqual(main.command?.arguments?.map((u) => (u as vscode.Uri).path), ['/ws/main.go'], 'a neighbour opens its file');
    assert.equal(main.collapsibleState, vscode.TreeItemCollapsibleState.Collapsed, 'and unfolds to its own neighbours');
    assert.notEqual(main.id, p.getTreeItem(file).id);

    p.refresh();
    store.update({ seq: 2, updates: [node('greet.go', 0.8)], removed: [] });
    p.getChildren(file);
    assert.equal(asked.length, 1, 'a heat tick asks nothing of the graph');
  });

  it('asks again after a fresh write, not after the write cools off', async () => {
    const store = new HeatStore();
    store.snapshot({ seq: 1, nodes: [node('greet.go', 0.5)] });
    const { f, asked } = folder(store);
    const p = new HeatTreeProvider(() => [f]);
    const file = p.getChildren()[0];
    p.getChildren(file);
    let redraw = redrawn(p);
    asked[0].resolve(greetGraph);
    await redraw;

    store.update({ seq: 2, updates: [node('main.go', 1, 'write', 2)], removed: [] });
    store.update({ seq: 3, updates: [node('main.go', 0.9, 'write', 2)], removed: [] });
    p.getChildren(file);
    assert.equal(asked.length, 2, 'main.go was written: greet.go\'s neighbours may have moved');
    redraw = redrawn(p);
    asked[1].resolve(greetGraph);
    await redraw;
    store.update({ seq: 4, updates: [node('main.go', 0.8, 'write', 2)], removed: [] });
    p.getChildren(file);
    assert.equal(asked.length, 2, 'the same write cooling off is no new write');
  });

  it('says so when the file is not in the code graph', async () => {
    const store = new HeatStore();
    store.snapshot({ seq: 1, nodes: [node('notes.txt', 0.5)] });
    const { f, asked } = folder(store);
    const p = new HeatTreeProvider(() => [f]);
    const file = p.getChildren()[0];
    p.getChildren(file);
    const redraw = redrawn(p);
    asked[0].reject(new RpcFailure(-32602, 'invalid params: not in the code graph: notes.txt is not a file of a language the graph reads (Go, Python)'));
    await redraw;
    assert.deepEqual(labels(p, p.getChildren(file)), ['No neighbours: not in the code graph (notes.txt is not a file of a language the graph reads (Go, Python))']);
  });

  it('says so when the graph cannot answer, and asks again on Refresh', async () => {
    const store = new HeatStore();
    store.snapshot({ seq: 1, nodes: [node('a.go', 0.5)] });
    const { f, asked } = folder(store);
    const p = new HeatTreeProvider(() => [f]);
    const file = p.getChildren()[0];
    p.getChildren(file);
    let redraw = redrawn(p);
    asked[0].reject(new RpcFailure(-32603, 'agent/codeGraph: the code graph is unavailable: no state dir'));
    await redraw;
    assert.deepEqual(labels(p, p.getChildren(file)), ['The code graph is unavailable (agent/codeGraph: the code graph is unavailable: no state dir)']);

    p.forget();
    p.getChildren(file);
    assert.equal(asked.length, 2);
    redraw = redrawn(p);
    asked[1].resolve({ nodes: [{ id: 'a.go', kind: 'file' }], edges: [], truncated: true });
    await redraw;
    const groups = p.getChildren(file);
    assert.deepEqual(labels(p, groups), ['References (no file)', 'Referenced by (no file)', 'Cut at the code graph\'s limits (agent/codeGraph answers at most 500 nodes and 2000 edges)']);
    assert.equal(p.getTreeItem(groups[0]).collapsibleState, vscode.TreeItemCollapsibleState.None);
  });

  it('drops an answer to a question forgotten meanwhile', async () => {
    const store = new HeatStore();
    store.snapshot({ seq: 1, nodes: [node('greet.go', 0.5)] });
    const { f, asked } = folder(store);
    const p = new HeatTreeProvider(() => [f]);
    const file = p.getChildren()[0];
    p.getChildren(file);
    p.forget();
    p.getChildren(file);
    const redraw = redrawn(p);
    asked[1].resolve(greetGraph);
    await redraw;
    asked[0].reject(new RpcFailure(-32603, 'the server stopped'));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(labels(p, p.getChildren(file)), ['References (1 file)', 'Referenced by (1 file)']);
  });

  it('groups the files by folder in a multi-root workspace, leaving out folders without heat', () => {
    const a = new HeatStore();
    a.snapshot({ seq: 1, nodes: [node('x.go', 0.5)] });
    const b = new HeatStore();
    b.snapshot({ seq: 1, nodes: [] });
    const fa = { ...folder(a).f, key: 'file:///a', name: 'a', uri: vscode.Uri.file('/a') };
    const fb = { ...folder(b).f, key: 'file:///b', name: 'b', uri: vscode.Uri.file('/b') };
    const p = new HeatTreeProvider(() => [fa, fb]);
    const top = p.getChildren();
    assert.deepEqual(labels(p, top), ['a']);
    const files = p.getChildren(top[0]);
    assert.deepEqual(labels(p, files), ['x.go (heat 0.50, read)']);
    assert.equal(p.getTreeItem(files[0]).resourceUri?.path, '/a/x.go');
  });
});
