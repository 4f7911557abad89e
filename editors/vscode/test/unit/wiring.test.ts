import assert from 'node:assert/strict';
import * as os from 'node:os';
import { describe, it } from 'node:test';
import * as vscode from 'vscode';
import { CommandRunner } from '../../src/handlers/runCommand';
import { PendingStore } from '../../src/pending';
import { HeatDecorations, HeatStore } from '../../src/views/heat';
import { TaskStore } from '../../src/views/taskModel';
import { Connection, ErrorCodes, register, RpcError, WiringDeps } from '../../src/wiring';
import { FakeEditor } from './fakes';

type Handler = (params: unknown, token: vscode.CancellationToken) => unknown;

class FakeConnection implements Connection {
  readonly requests = new Map<string, Handler>();
  readonly notifications = new Map<string, (params: unknown) => void>();
  /** What the wiring sent agentls, in order. */
  readonly sent: [string, unknown][] = [];
  onRequest(method: string, handler: Handler): { dispose(): void } {
    this.requests.set(method, handler);
    return { dispose: () => this.requests.delete(method) };
  }
  onNotification(method: string, handler: (params: unknown) => void): { dispose(): void } {
    this.notifications.set(method, handler);
    return { dispose: () => this.notifications.delete(method) };
  }
  request(method: string, params: unknown): Promise<unknown> {
    const h = this.requests.get(method);
    if (h === undefined) {
      return Promise.reject(new Error(`no handler for ${method}`));
    }
    const token = new vscode.CancellationTokenSource().token;
    return Promise.resolve().then(() => h(params, token));
  }
  notify(method: string, params: unknown): void {
    this.notifications.get(method)?.(params);
  }
  sendNotification(method: string, params: unknown): void {
    this.sent.push([method, params]);
  }
}

/** The language servers' diagnostics changing: what onDidChangeDiagnostics fires. */
const diagnosticsChanged = new vscode.EventEmitter<readonly vscode.Uri[]>();

function setup(): { conn: FakeConnection; deps: WiringDeps; warnings: string[]; disposables: { dispose(): void }[] } {
  const warnings: string[] = [];
  const pending = new PendingStore();
  const tasks = new TaskStore();
  const editor = new FakeEditor();
  const deps: WiringDeps = {
    folder: { key: 'file:///ws', name: 'ws', fsPath: '/ws' },
    pending,
    folders: () => [{ path: '/ws', name: 'ws' }],
    readFile: {
      textDocuments: () => [{ uri: vscode.Uri.file('/ws/a.txt'), getText: () => 'open text' } as unknown as vscode.TextDocument],
      readFile: () => Promise.reject(new Error('not found')),
      root: () => vscode.Uri.file('/ws'),
    },
    locate: {
      // a provider for a.go alone: one place, itself
      references: (uri, line, character) => Promise.resolve(uri.path === '/ws/a.go'
        ? [{ uri, range: { start: { line, character }, end: { line, character: character + 1 } } }] : []),
      definitions: () => Promise.resolve(undefined),
      parseUri: (u) => vscode.Uri.parse(u, true),
    },
    diagnostics: {
      // b.go has an error; everything under /ws is the folder's
      of: (uri) => uri.path === '/ws/b.go' ? [{ range: { start: { line: 1, character: 2 }, end: { line: 1, character: 6 } }, severity: 0, message: 'undefined: name', source: 'compiler', code: 'UndeclaredName' }] : [],
      all: () => [],
      inside: (uri) => uri.path.startsWith('/ws/'),
      parseUri: (u) => vscode.Uri.parse(u, true),
      onDidChange: (listener) => diagnosticsChanged.event(listener),
    },
    ask: {
      showQuickPick: (items) => Promise.resolve(items[0]),
      showInputBox: () => Promise.resolve('typed'),
    },
    approve: { notify: (_t, _m, actions) => Promise.resolve(actions[0]) },
    applyEdit: editor.deps({ pending, tasks }),
    runner: new CommandRunner({ append: () => undefined, show: () => undefined }),
    tasks,
    heat: new HeatDecorations(new HeatStore(), () => vscode.Uri.file('/ws')),
    warn: (m) => warnings.push(m),
  };
  const conn = new FakeConnection();
  const disposables = register(conn, deps);
  return { conn, deps, warnings, disposables };
}

describe('the connection wiring', () => {
  it('answers the reverse calls of the contract', async () => {
    const { conn } = setup();
    assert.deepEqual([...conn.requests.keys()].sort(),
      ['agent/ask', 'agent/definition', 'agent/diagnostics', 'agent/readFile', 'agent/references', 'agent/runCommand', 'window/showMessageRequest', 'workspace/applyEdit']);
    assert.deepEqual(await conn.request('agent/references', { textDocument: { uri: 'file:///ws/a.go' }, position: { line: 2, character: 5 }, context: { includeDeclaration: true } }),
      [{ uri: 'file:///ws/a.go', range: { start: { line: 2, character: 5 }, end: { line: 2, character: 6 } } }]);
    assert.equal(await conn.request('agent/definition', { textDocument: { uri: 'file:///ws/a.go' }, position: { line: 2, character: 5 } }), null);
    assert.deepEqual(await conn.request('agent/readFile', { path: 'a.txt', uri: 'file:///ws/a.txt' }), { content: 'open text' });
    assert.deepEqual(await conn.request('agent/ask', { question: 'Pick', options: ['x', 'y'] }), { answer: 'x' });
    const run = await conn.request('agent/runCommand', { command: 'echo hi', cwd: os.tmpdir(), timeoutMs: 10000 });
    assert.deepEqual(run, { exitCode: 0, output: 'hi\n' });
    assert.deepEqual(await conn.request('window/showMessageRequest', { type: 3, message: 'Run `ls`?', actions: [{ title: 'Run' }, { title: 'Deny' }] }), { title: 'Run' });
    assert.deepEqual(await conn.request('workspace/applyEdit', { edit: { changes: {} } }), { applied: true });
    assert.deepEqual(await conn.request('agent/diagnostics', { uris: ['file:///ws/b.go'] }), { items: [{ uri: 'file:///ws/b.go', diagnostics: [
      { range: { start: { line: 1, character: 2 }, end: { line: 1, character: 6 } }, severity: 1, message: 'undefined: name', code: 'UndeclaredName', source: 'compiler' },
    ] }] });
  });

  it('tells agentls when the diagnostics of its folder\'s documents change, and stops when disposed', () => {
    const { conn, disposables } = setup();
    diagnosticsChanged.fire([vscode.Uri.file('/ws/b.go'), vscode.Uri.file('/elsewhere/c.go')]);
    diagnosticsChanged.fire([vscode.Uri.file('/elsewhere/c.go')]);
    assert.deepEqual(conn.sent, [['agent/didChangeDiagnostics', { uris: ['file:///ws/b.go'] }]]);
    for (const d of disposables) {
      d.dispose();
    }
    diagnosticsChanged.fire([vscode.Uri.file('/ws/b.go')]);
    assert.equal(conn.sent.length, 1);
  });

  const invalid: [string, string, unknown, RegExp][] = [
    ['readFile params that are not an object', 'agent/readFile', [1], /takes an object/],
    ['a readFile uri that is not a string', 'agent/readFile', { path: 'a', uri: 3 }, /uri must be a string/],
    ['a runCommand without a command', 'agent/runCommand', { cwd: '/' }, /command and cwd are required/],
    ['a runCommand timeout that is not a number', 'agent/runCommand', { command: 'x', cwd: '/', timeoutMs: '5' }, /timeoutMs must be a number/],
    ['ask options that are not strings', 'agent/ask', { question: 'q', options: [1] }, /options must be a list of strings/],
    ['a message request without a message', 'window/showMessageRequest', { type: 3 }, /message is required/],
    ['message actions without titles', 'window/showMessageRequest', { type: 3, message: 'm', actions: ['Run'] }, /actions must be a list of \{title\}/],
    ['a readFile of a file that cannot be read', 'agent/readFile', { path: 'gone', uri: 'file:///ws/gone' }, /cannot read gone/],
    ['references without a document', 'agent/references', { position: { line: 0, character: 0 } }, /textDocument\.uri is required/],
    ['a definition at a position that is no position', 'agent/definition', { textDocument: { uri: 'file:///ws/a.go' }, position: { line: -1, character: 0 } }, /position needs a line/],
    ['references of a document that is no URI', 'agent/references', { textDocument: { uri: 'no uri' }, position: { line: 0, character: 0 } }, /is not a URI/],
    ['diagnostics of uris that are not a list', 'agent/diagnostics', { uris: 'file:///ws/b.go' }, /uris must be a list of URIs/],
  ];
  for (const [name, method, params, message] of invalid) {
    it(`answers invalid params for ${name}`, async () => {
      const { conn } = setup();
      await assert.rejects(conn.request(method, params), (e: unknown) => {
        assert.ok(e instanceof RpcError);
        assert.equal(e.code, ErrorCodes.invalidParams);
        assert.match(e.message, message);
        return true;
      });
    });
  }

  it('feeds task updates to the task store, as tasks of its folder', () => {
    const { conn, deps } = setup();
    conn.notify('agent/taskUpdate', { taskId: 't1', sessionId: 's', seq: 1, state: 'running', subtasks: [], event: { kind: 'planned' } });
    assert.equal(deps.tasks.get('t1')?.state, 'running');
    assert.equal(deps.tasks.get('t1')?.folder, 'file:///ws');
  });

  it('puts an approval under its task whichever of the request and its ask event comes first', async () => {
    const { conn, deps } = setup();
    deps.approve = { notify: () => new Promise(() => undefined) };
    const approval = { type: 3, message: 'Run `ls`?', actions: [{ title: 'Run' }, { title: 'Deny' }] };
    void conn.request('window/showMessageRequest', approval);
    await new Promise((r) => setImmediate(r));
    assert.equal(deps.pending.all()[0]?.taskId, undefined, 'no event has named the task yet');
    conn.notify('agent/taskUpdate', { taskId: 't1', sessionId: 's', seq: 1, state: 'waiting', subtasks: [], event: { kind: 'ask', subtaskId: '3', question: 'Run `ls`?', options: ['Run', 'Deny'] } });
    assert.equal(deps.pending.all()[0]?.taskId, 't1');
    assert.equal(deps.pending.all()[0]?.subtaskId, '3');
  });

  it('feeds heat updates to the explorer decorations', () => {
    const { conn, deps } = setup();
    deps.heat.applySnapshot({ seq: 0, nodes: [] });
    conn.notify('agent/heatUpdate', { seq: 1, updates: [{ path: 'a.txt', heat: 1, inContext: true, lastAction: 'write', turn: 1 }], removed: [] });
    assert.equal(deps.heat.provideFileDecoration(vscode.Uri.file('/ws/a.txt'))?.badge, '9');
  });

  it('warns about malformed notifications and keeps going', () => {
    const { conn, deps, warnings } = setup();
    conn.notify('agent/taskUpdate', { taskId: 't1' });
    conn.notify('agent/heatUpdate', 'hot');
    assert.equal(warnings.length, 2);
    assert.equal(deps.tasks.tasks().length, 0);
  });

  it('removes every handler on dispose', () => {
    const { conn, disposables } = setup();
    for (const d of disposables) {
      d.dispose();
    }
    assert.equal(conn.requests.size + conn.notifications.size, 0);
  });
});
