import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as vscode from 'vscode';
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
      usage: { inputTokens: 2000, outputTokens: 100 },
    });
    const [task] = tree.getChildren();
    assert.ok(task);
    assert.equal(tree.getTreeItem(task).description, 'done · 3/3');
    assert.deepEqual(labels(tree, task).slice(3), [
      'greet added and tested', 'update main.go', 'create x.go (not applied)', 'Tokens: 2.0k in · 100 out',
    ]);
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

  it('shows the question while the task waits on the person', () => {
    const { store, tree } = running();
    store.update({ taskId: 't1', sessionId: 's1', seq: 4, state: 'waiting', subtasks, event: { kind: 'ask', subtaskId: '2', question: 'Which port?' } });
    const [task] = tree.getChildren();
    assert.equal(labels(tree, task)[0], 'Waiting for you: Which port?');
  });
});

describe('the status bar', () => {
  it('says agentls with no task', () => {
    assert.equal(statusText(undefined, 0).text, '$(hubot) agentls');
  });
  it('shows the newest task\'s state and progress, and how many more run', () => {
    const { store } = running();
    store.begin('t2', 'Another');
    const t = store.get('t1');
    assert.equal(statusText(t, 2).text, '$(sync~spin) agentls: running 2/3 +1');
    assert.match(statusText(t, 1).tooltip, /Add greet and test it/);
  });
});
