import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as vscode from 'vscode';
import { PendingStore } from '../../src/pending';
import { Subtask } from '../../src/protocol';
import { statusText } from '../../src/views/statusBar';
import { TaskStore } from '../../src/views/taskModel';
import { Node, TaskTreeProvider } from '../../src/views/taskTree';

const subtasks: Subtask[] = [
  { id: '1', content: 'Add a greet function', state: 'done', dependsOn: [] },
  { id: '2', content: 'Test it', state: 'running', dependsOn: ['1'] },
  { id: '3', content: 'Document it', state: 'blocked', dependsOn: ['2'] },
];

function labels(tree: TaskTreeProvider, node?: Node): string[] {
  return tree.getChildren(node).map((n) => {
    const l = tree.getTreeItem(n).label;
    return typeof l === 'string' ? l : (l?.label ?? '');
  });
}

function running(): { store: TaskStore; tree: TaskTreeProvider } {
  const store = new TaskStore();
  const tree = new TaskTreeProvider(store);
  store.begin('t1', 'Add greet and test it');
  store.update({ taskId: 't1', sessionId: 's1', seq: 1, state: 'running', subtasks, event: { kind: 'planned' } });
  store.update({
    taskId: 't1', sessionId: 's1', seq: 2, state: 'running', subtasks,
    event: { kind: 'toolCall', subtaskId: '2', tool: 'run_command', arguments: { command: 'go test ./...' } },
  });
  store.update({ taskId: 't1', sessionId: 's1', seq: 3, state: 'running', subtasks, event: { kind: 'usage', inputTokens: 1200, outputTokens: 80 } });
  return { store, tree };
}

describe('the Tasks tree', () => {
  it('shows a planning task with a placeholder child', () => {
    const store = new TaskStore();
    const tree = new TaskTreeProvider(store);
    store.begin('t1', 'Do it');
    const [task] = tree.getChildren();
    assert.ok(task);
    const item = tree.getTreeItem(task);
    assert.equal(item.label, 'Do it');
    assert.equal(item.description, 'planning');
    assert.deepEqual(labels(tree, task), ['Planning…']);
  });

  it('lists the subtasks with state icons, then the tokens', () => {
    const { tree } = running();
    const [task] = tree.getChildren();
    assert.ok(task);
    const item = tree.getTreeItem(task);
    assert.equal(item.description, 'running · 2/3');
    assert.equal((item.iconPath as vscode.ThemeIcon).id, 'sync~spin');
    const kids = tree.getChildren(task);
    assert.deepEqual(kids.map((n) => tree.getTreeItem(n).label), [
      '1. Add a greet function', '2. Test it', '3. Document it', 'Tokens: 1.2k in · 80 out',
    ]);
    assert.deepEqual(kids.slice(0, 3).map((n) => (tree.getTreeItem(n).iconPath as vscode.ThemeIcon).id), [
      'pass-filled', 'sync~spin', 'circle-slash',
    ]);
  });

  it('names the instruction files the task works under, before its tokens', () => {
    const { store, tree } = running();
    store.update({
      taskId: 't1', sessionId: 's1', seq: 4, state: 'running', subtasks,
      event: { kind: 'instructions', instructions: [{ path: 'AGENTS.md', tokens: 9 }, { path: 'pkg/AGENTS.md', tokens: 30 }] },
    });
    const [task] = tree.getChildren();
    const kids = tree.getChildren(task);
    assert.deepEqual(kids.slice(-2).map((n) => tree.getTreeItem(n).label), [
      'Instructions: AGENTS.md (9 tokens), pkg/AGENTS.md (30 tokens)', 'Tokens: 1.2k in · 80 out',
    ]);
  });

  it('shows the current tool call of a running subtask', () => {
    const { tree } = running();
    const [task] = tree.getChildren();
    const kids = tree.getChildren(task);
    const sub2 = kids[1];
    assert.ok(sub2);
    const item = tree.getTreeItem(sub2);
    assert.equal(item.description, 'run_command go test ./...');
    assert.equal(item.collapsibleState, vscode.TreeItemCollapsibleState.Expanded);
    assert.deepEqual(labels(tree, sub2), ['run_command go test ./...', 'after 1']);
  });

  it('shows the summary and the changes once the task is done', () => {
    const { store, tree } = running();
    store.finish({
      taskId: 't1', sessionId: 's1', state: 'done', summary: 'greet added and tested',
      subtasks: subtasks.map((s) => ({ ...s, state: 'done' })),
      changes: [{ path: 'main.go', operation: 'update', applied: true, diff: '' }, { path: 'x.go', operation: 'create', applied: false, diff: '' }],
      applied: 1, rejected: 1, counts: { done: 3, skipped: 0, removed: 0, failed: 0, blocked: 0, notRun: 0 }, usage: { inputTokens: 2000, outputTokens: 100 },
    });
    const [task] = tree.getChildren();
    assert.ok(task);
    assert.equal(tree.getTreeItem(task).description, 'done · 3/3');
    assert.deepEqual(labels(tree, task).slice(3), [
      'greet added and tested', 'Changes: 1 applied, 1 rejected', 'update main.go', 'create x.go (rejected)', 'Tokens: 2.0k in · 100 out',
    ]);
    const change = tree.getChildren(task)[5];
    assert.ok(change);
    const item = tree.getTreeItem(change);
    assert.equal(item.contextValue, 'agentls.change');
    assert.equal((item as vscode.TreeItem & { command?: { command: string } }).command?.command, 'agentls.showChange');
    assert.equal(item.tooltip, 'main.go: updated. Click to see the change.');
  });

  it('offers the steering of each subtask by its state and its task\'s', () => {
    const { store, tree } = running();
    const [task] = tree.getChildren();
    assert.ok(task);
    assert.equal(tree.getTreeItem(task).contextValue, 'agentls.task.running');
    assert.deepEqual(tree.getChildren(task).slice(0, 3).map((n) => tree.getTreeItem(n).contextValue), [
      'agentls.subtask.done.running', 'agentls.subtask.running.running', 'agentls.subtask.blocked.running',
    ]);
    store.finish({ taskId: 't1', sessionId: 's1', state: 'done', summary: '', subtasks, changes: [], applied: 0, rejected: 0, counts: { done: 1, skipped: 0, removed: 0, failed: 0, blocked: 0, notRun: 0 }, usage: { inputTokens: 0, outputTokens: 0 } });
    assert.equal(tree.getTreeItem(task).contextValue, 'agentls.task.ended.session', 'an ended task with a session can be followed up');
    assert.equal(tree.getTreeItem(tree.getChildren(task)[0] ?? task).contextValue, 'agentls.subtask.done.ended');
  });

  it('tells VS Code to redraw when the store changes', () => {
    const store = new TaskStore();
    const tree = new TaskTreeProvider(store);
    let fired = 0;
    tree.onDidChangeTreeData(() => fired++);
    store.begin('t1', 'x');
    assert.equal(fired, 1);
    tree.dispose();
    store.begin('t2', 'y');
    assert.equal(fired, 1);
  });

  it('shows what the task waits on first, answerable from the row and its inline actions', () => {
    const store = new TaskStore();
    const pending = new PendingStore();
    const tree = new TaskTreeProvider(store, pending);
    store.begin('t1', 'Add greet');
    let fired = 0;
    tree.onDidChangeTreeData(() => fired++);
    const p = pending.add({ kind: 'approval', folder: '', folderName: 'ws', taskId: 't1', subtaskId: '2', text: 'agentls wants to run go test ./... in ws', markdown: '', options: ['Run', 'Always allow', 'Deny'] }, () => undefined);
    assert.equal(fired, 1, 'a new question redraws the tree');
    const [task] = tree.getChildren();
    assert.ok(task);
    assert.equal(tree.getTreeItem(task).description, 'planning · 1 waiting for you');
    const [row] = tree.getChildren(task);
    assert.deepEqual(row, { kind: 'pending', id: p.id });
    const item = tree.getTreeItem(row);
    assert.equal(item.label, 'Waiting for you: agentls wants to run go test ./... in ws');
    assert.equal(item.contextValue, 'agentls.pending.approval');
    assert.equal(item.description, 'subtask 2');
    assert.deepEqual((item as vscode.TreeItem & { command?: { command: string; arguments: unknown[] } }).command?.arguments, [{ kind: 'pending', id: p.id }]);
    assert.deepEqual(tree.getParent(row), { kind: 'task', taskId: 't1' });
    pending.answer(p.id, 'Run');
    assert.deepEqual(labels(tree, task), ['Planning…'], 'answered: the row goes');
  });

  it('shows a question of no known task at the top', () => {
    const store = new TaskStore();
    const pending = new PendingStore();
    const tree = new TaskTreeProvider(store, pending);
    store.begin('t1', 'x');
    pending.add({ kind: 'question', folder: '', folderName: 'ws', text: 'Port?', markdown: 'Port?', options: [] }, () => undefined);
    assert.deepEqual(labels(tree), ['Waiting for you: Question: Port?', 'x']);
  });

  it('shows what a subtask works on with the workspace\'s paths relative and without backticks', () => {
    const store = new TaskStore();
    const tree = new TaskTreeProvider(store, new PendingStore(), () => [{ key: 'file:///home/me/project', name: 'project', path: '/home/me/project' }]);
    store.begin('t1', 'Name it', { folder: 'file:///home/me/project' });
    store.update({ taskId: 't1', sessionId: 's1', seq: 1, state: 'running', subtasks, event: { kind: 'planned' } }, 'file:///home/me/project');
    store.update({
      taskId: 't1', sessionId: 's1', seq: 2, state: 'running', subtasks,
      event: { kind: 'toolCall', subtaskId: '2', tool: 'ask_human', arguments: { question: 'Which name for `greet` in /home/me/project/a/long/way/down/to/the/file/main.go?' } },
    }, 'file:///home/me/project');
    store.update({ taskId: 't1', sessionId: 's1', seq: 3, state: 'running', subtasks, event: { kind: 'message', subtaskId: '2', text: 'Asking about `/home/me/project/main.go`.' } }, 'file:///home/me/project');
    const sub: Node = { kind: 'subtask', taskId: 't1', subtaskId: '2' };
    assert.equal(tree.getTreeItem(sub).description, 'ask_human Which name for greet in a/long/way/down/to/the/file/main.go?');
    assert.deepEqual(labels(tree, sub), ['ask_human Which name for greet in a/long/way/down/to/the/file/main.go?', 'Asking about main.go.', 'after 1']);
  });

  it('groups the tasks by workspace folder when there are several', () => {
    const store = new TaskStore();
    const pending = new PendingStore();
    const folders = [{ key: 'file:///a', name: 'api' }, { key: 'file:///b', name: 'web' }];
    const tree = new TaskTreeProvider(store, pending, () => folders);
    store.begin('t1', 'Fix the API', { folder: 'file:///a' });
    store.begin('t2', 'Fix the page', { folder: 'file:///b' });
    store.begin('t3', 'Style the page', { folder: 'file:///b' });
    const roots = tree.getChildren();
    assert.deepEqual(roots, [{ kind: 'folder', folder: 'file:///a' }, { kind: 'folder', folder: 'file:///b' }]);
    assert.deepEqual(labels(tree), ['api', 'web']);
    assert.equal(tree.getTreeItem(roots[1]).description, '2 tasks · 2 running');
    assert.deepEqual(labels(tree, roots[1]), ['Style the page', 'Fix the page']);
    assert.deepEqual(tree.getParent({ kind: 'task', taskId: 't1' }), { kind: 'folder', folder: 'file:///a' });
  });
});

describe('the status bar', () => {
  it('says agentls with no task', () => {
    assert.equal(statusText(undefined, 0).text, '$(hubot) agentls');
  });
  it('says what waits on the person before any task, and a click answers it', () => {
    const pending = new PendingStore();
    pending.add({ kind: 'approval', folder: '', folderName: 'ws', text: 'agentls wants to run ls in ws', markdown: '', options: ['Run'] }, () => undefined);
    const one = statusText(undefined, 0, pending.all());
    assert.equal(one.text, '$(bell-dot) agentls: waiting for you');
    assert.match(one.tooltip, /agentls wants to run ls in ws\nClick to answer\./);
    pending.add({ kind: 'question', folder: '', folderName: 'ws', text: 'Port?', markdown: '', options: [] }, () => undefined);
    assert.equal(statusText(undefined, 0, pending.all()).text, '$(bell-dot) agentls: 2 waiting for you');
  });
  it('shows the newest task\'s state and progress, and how many more run', () => {
    const { store } = running();
    store.begin('t2', 'Another');
    const t = store.get('t1');
    assert.equal(statusText(t, 2).text, '$(sync~spin) agentls: running 2/3 +1');
    assert.match(statusText(t, 1).tooltip, /Add greet and test it/);
  });
  it('says how a skipped and a removed subtask ended, in the tree and the status bar, never that all were done', () => {
    const { store, tree } = running();
    const left: Subtask[] = [{ id: '1', content: 'a', state: 'skipped', dependsOn: [] }, { id: '3', content: 'c', state: 'done', dependsOn: [] }];
    store.finish({ taskId: 't1', sessionId: 's1', state: 'done', summary: '1 of 3 subtasks done, 1 skipped, 1 removed.', subtasks: left, changes: [],
      applied: 0, rejected: 0, counts: { done: 1, skipped: 1, removed: 1, failed: 0, blocked: 0, notRun: 0 }, usage: { inputTokens: 0, outputTokens: 0 } });
    const t = store.get('t1');
    assert.equal(statusText(t, 0).text, '$(pass) agentls: done 1/3 (1 skipped, 1 removed)');
    assert.match(statusText(t, 0).tooltip, /done: 1 of 3 subtasks done, 1 skipped, 1 removed/);
    const [task] = tree.getChildren();
    assert.ok(task);
    const item = tree.getTreeItem(task);
    assert.equal(item.description, 'done · 1/3 (1 skipped, 1 removed)');
    assert.match((item.tooltip as vscode.MarkdownString).value, /1 of 3 subtasks done, 1 skipped, 1 removed/);
  });
});
