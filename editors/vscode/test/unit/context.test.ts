// Todos, thinking, usage and cost, engines and images: what the stores keep
// of them, and what the Tasks tree, the conversation view, the pickers and
// the sessions list show.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { engineItem, engineItems } from '../../src/choices';
import { PendingStore } from '../../src/pending';
import { EnginesResult, Subtask, TaskEvent, TaskUpdateParams, Todo } from '../../src/protocol';
import { Conversation, isImagePath, runAttachments, viewState } from '../../src/views/conversationModel';
import { sessionItem, transcript } from '../../src/views/sessions';
import { checkLine, formatContext, formatCost, TaskStore, taskUsageText, usageText } from '../../src/views/taskModel';
import { Node, TaskTreeProvider } from '../../src/views/taskTree';
import { renderHeader, renderLog } from '../../src/webview/render';
import { isFromView } from '../../src/webview/state';

const folder = 'file:///home/me/project';
/** text is a tree item's label or tooltip where it is a string, else ''. */
const text = (x: unknown): string => (typeof x === 'string' ? x : '');
const extras = { folderName: 'project', multiRoot: false, model: 'configured', intent: '', folders: [{ path: '/home/me/project', name: 'project' }], canAttach: true, engine: '' };

const todos: Todo[] = [{ content: 'Read the selection', status: 'done' }, { content: 'Finish', status: 'in_progress' }, { content: 'Ship', status: 'pending' }];
const subtasks: Subtask[] = [
  {
    id: '1', content: 'Read it', state: 'running', dependsOn: [], todos,
    usage: { inputTokens: 1000, outputTokens: 100, cost: 0.0045, contextTokens: 1000, contextWindow: 200000 },
  },
  {
    id: '2', content: 'Write it', state: 'running', dependsOn: [], engine: 'fake',
    steps: [{ content: 'read main.txt', status: 'completed' }, { content: 'write out.txt', status: 'in_progress' }],
    usage: { inputTokens: 300, outputTokens: 20 },
  },
];

function feed(store: TaskStore, events: TaskEvent[]): void {
  let seq = store.get('t1')?.seq ?? 0;
  for (const event of events) {
    const p: TaskUpdateParams = { taskId: 't1', sessionId: 's1', seq: ++seq, state: 'running', subtasks, event };
    store.update(p, folder);
  }
}

function started(): { store: TaskStore; conv: Conversation } {
  const store = new TaskStore();
  const conv = new Conversation();
  store.begin('t1', 'Read what I attached', { folder });
  conv.show('t1', folder, false);
  feed(store, [
    { kind: 'thinking', text: 'One step ' },
    { kind: 'thinking', text: 'will do.' },
    { kind: 'messageDelta', text: 'One step.' },
    { kind: 'thinking', subtaskId: '1', text: 'First a checklist,\nthen the work.' },
    { kind: 'todos', subtaskId: '1', todos: todos.slice(0, 2) },
    { kind: 'toolCall', subtaskId: '1', tool: 'todo', arguments: {} },
    { kind: 'thinking', subtaskId: '1', text: '<b>bold</b> thoughts' },
    { kind: 'todos', subtaskId: '1', todos },
    { kind: 'engineStarted', subtaskId: '2', text: 'fake', summary: 'started in 12 ms' },
    { kind: 'steps', subtaskId: '2' },
    { kind: 'usage', subtaskId: '1', inputTokens: 1300, outputTokens: 120, cost: 0.0057, contextTokens: 1000, contextWindow: 200000 },
  ]);
  return { store, conv };
}

describe('thinking', () => {
  it('is one block per agent up to its next words or tool call, closed when they come', () => {
    const { store } = started();
    const t = store.get('t1');
    assert.ok(t);
    const coordinator = (t.transcript.get('') ?? []).filter((x) => x.kind === 'thinking');
    assert.deepEqual(coordinator.map((x) => [x.text, x.streaming]), [['One step will do.', false]]);
    const worker = (t.transcript.get('1') ?? []).filter((x) => x.kind === 'thinking');
    assert.deepEqual(worker.map((x) => [x.text, x.streaming]), [['First a checklist,\nthen the work.', false], ['<b>bold</b> thoughts', true]]);
  });

  it('ends with its task', () => {
    const { store } = started();
    store.update({ taskId: 't1', sessionId: 's1', seq: 99, state: 'done', subtasks, event: { kind: 'stateChanged', state: 'done' } }, folder);
    assert.ok((store.get('t1')?.transcript.get('1') ?? []).every((x) => x.kind !== 'thinking' || !x.streaming));
  });

  it('is folded in the conversation on one line "Thinking…", its text escaped, and never in the tree', () => {
    const { store, conv } = started();
    const html = renderLog(viewState(conv, store, new PendingStore(), extras));
    const blocks = html.match(/<details class="thinking[^"]*"[^>]*>/g) ?? [];
    assert.equal(blocks.length, 3, 'each block of thinking');
    assert.ok(blocks.every((b) => !/\bopen\b/.test(b)), 'folded');
    assert.match(html, /<summary>Thinking…<\/summary><div class="thought">First a checklist,\nthen the work\.<\/div>/);
    assert.match(html, /&lt;b&gt;bold&lt;\/b&gt; thoughts/, 'escaped, not rendered');
    assert.match(html, /class="thinking streaming"/, 'the block still streaming is marked');

    const tree = new TaskTreeProvider(store);
    const all = (n?: Node): string[] => tree.getChildren(n).flatMap((c) => {
      const item = tree.getTreeItem(c);
      return [`${text(item.label)} ${text(item.description)} ${text(item.tooltip)}`, ...all(c)];
    });
    assert.ok(all().every((l) => !/checklist,|thoughts|will do/.test(l)), 'no thinking in the tree');
  });
});

describe('todos and engines', () => {
  it('shows a subtask\'s todos under it in the tree, with their marks', () => {
    const { store } = started();
    const tree = new TaskTreeProvider(store);
    const [task] = tree.getChildren();
    assert.ok(task);
    const sub1 = tree.getChildren(task).find((n) => n.kind === 'subtask' && n.subtaskId === '1');
    assert.ok(sub1);
    const children = tree.getChildren(sub1).map((n) => tree.getTreeItem(n));
    const todoRows = children.filter((i) => text(i.tooltip).startsWith('todo'));
    assert.deepEqual(todoRows.map((i) => [i.label, (i.iconPath as { id: string }).id]), [
      ['Read the selection', 'pass'],
      ['Finish', 'arrow-right'],
      ['Ship', 'circle-large-outline'],
    ]);
    const item = tree.getTreeItem(sub1);
    assert.match(String(item.description), /1 of 3 done/, 'how much is done, on the row');
  });

  it('names a subtask\'s engine on its row and lists the engine\'s steps under it', () => {
    const { store } = started();
    const tree = new TaskTreeProvider(store);
    const [task] = tree.getChildren();
    assert.ok(task);
    const sub2 = tree.getChildren(task).find((n) => n.kind === 'subtask' && n.subtaskId === '2');
    assert.ok(sub2);
    assert.equal(tree.getTreeItem(sub2).label, '2. Write it [fake]');
    assert.match(text(tree.getTreeItem(sub2).tooltip), /engine: fake/);
    const steps = tree.getChildren(sub2).map((n) => tree.getTreeItem(n)).filter((i) => text(i.tooltip).startsWith('step'));
    assert.deepEqual(steps.map((i) => [i.label, (i.iconPath as { id: string }).id]), [['read main.txt', 'pass'], ['write out.txt', 'arrow-right']]);
  });

  it('shows the checklists, the engine and its start in the conversation', () => {
    const { store, conv } = started();
    const html = renderLog(viewState(conv, store, new PendingStore(), extras));
    assert.match(html, /<div class="todos" aria-label="Todos of subtask 1"><ul class="checklist"><li class="check check-done"><span class="mark" aria-label="done">☑<\/span> Read the selection<\/li><li class="check check-in_progress"><span class="mark" aria-label="in progress">→<\/span> Finish<\/li>/);
    assert.match(html, /<summary>Todos: 1 of 2 done<\/summary>/, 'each checklist the worker set, folded');
    assert.match(html, /<summary>Todos: 1 of 3 done<\/summary>/);
    assert.match(html, /2\. Write it<\/span> <span class="engine" title="Runs on the engine fake">\[fake\]<\/span>/);
    assert.match(html, /<div class="steps" aria-label="Steps of the engine"><ul class="checklist"><li class="check check-done">/);
    assert.match(html, /<summary>Steps: 1 of 2 done<\/summary>/);
    assert.match(html, /On engine fake: started in 12 ms/);
  });

  it('says a cleared checklist is cleared', () => {
    const { store, conv } = started();
    feed(store, [{ kind: 'todos', subtaskId: '1' }]);
    assert.match(renderLog(viewState(conv, store, new PendingStore(), extras)), /<summary>Todos cleared<\/summary>/);
  });

  it('checks the todos and steps with the marks of the other editors', () => {
    assert.deepEqual(todos.map(checkLine), ['[x] Read the selection', '[>] Finish', '[ ] Ship']);
    assert.equal(checkLine({ content: 'read', status: 'completed' }), '[x] read');
  });
});

describe('usage and cost', () => {
  it('renders tokens, the cost where priced, and the context against its window', () => {
    assert.equal(usageText({ inputTokens: 1000, outputTokens: 100, cost: 0.0045, contextTokens: 1000, contextWindow: 200000 }),
      '1.0k in · 100 out · $0.0045 · context 1.0k of 200k (1%)');
    assert.equal(usageText({ inputTokens: 2467, outputTokens: 244 }), '2.5k in · 244 out', 'an unpriced model: tokens only');
    assert.equal(usageText({ inputTokens: 0, outputTokens: 0 }), '', 'nothing used, nothing said');
    assert.equal(usageText(undefined), '');
    assert.equal(formatCost(12.3456), '$12.35');
    assert.equal(formatContext(150000), 'context 150k', 'no window: the tokens alone');
  });

  it('keeps the task\'s running totals, cost and context from the last usage event, and the run\'s total at the end', () => {
    const { store } = started();
    const t = store.get('t1');
    assert.ok(t);
    assert.equal(taskUsageText(t), 'Tokens: 1.3k in · 120 out · $0.0057 · context 1.0k of 200k (1%)');
    feed(store, [{ kind: 'usage', inputTokens: 1400, outputTokens: 130 }]);
    assert.equal(taskUsageText(t), 'Tokens: 1.4k in · 130 out · context 1.0k of 200k (1%)', 'a call without a price: no cost from then on');
    store.finish({ taskId: 't1', sessionId: 's1', state: 'done', summary: 'ok', subtasks, changes: null, applied: 0, rejected: 0, counts: { done: 2, skipped: 0, removed: 0, failed: 0, blocked: 0, notRun: 0 }, usage: { inputTokens: 1500, outputTokens: 140, cost: 0.0066 } });
    assert.match(taskUsageText(t), /^Tokens: 1\.5k in · 140 out · \$0\.0066/);
  });

  it('shows each subtask\'s usage in the tree and the conversation, and the task\'s', () => {
    const { store, conv } = started();
    const tree = new TaskTreeProvider(store);
    const [task] = tree.getChildren();
    assert.ok(task);
    const rows = tree.getChildren(task).map((n) => tree.getTreeItem(n));
    assert.ok(rows.some((i) => i.label === 'Tokens: 1.3k in · 120 out · $0.0057 · context 1.0k of 200k (1%)'), 'the task\'s usage');
    const sub1 = tree.getChildren(task).find((n) => n.kind === 'subtask' && n.subtaskId === '1');
    assert.ok(sub1);
    assert.match(String(tree.getTreeItem(sub1).description), /1\.1k tokens, \$0\.0045/);
    assert.match(text(tree.getTreeItem(sub1).tooltip), /tokens: 1\.0k in · 100 out · \$0\.0045 · context 1\.0k of 200k \(1%\)/);
    assert.ok(tree.getChildren(sub1).map((n) => tree.getTreeItem(n).label).includes('1.0k in · 100 out · $0.0045 · context 1.0k of 200k (1%)'));

    const html = renderLog(viewState(conv, store, new PendingStore(), extras));
    assert.match(html, /<div class="meta usage">1\.0k in · 100 out · \$0\.0045 · context 1\.0k of 200k \(1%\)<\/div>/);
    assert.match(html, /<div class="meta usage">300 in · 20 out<\/div>/);
    assert.match(html, /<div class="meta">Tokens: 1\.3k in · 120 out · \$0\.0057 · context 1\.0k of 200k \(1%\)<\/div>/);
  });

  it('shows a session\'s usage in the sessions list and each task\'s in its transcript', () => {
    const usage = { inputTokens: 1000, outputTokens: 100, cost: 0.0045 };
    const item = sessionItem({ sessionId: 's1', title: 'Read', createdAt: '', updatedAt: 'now', usage, tasks: [{ taskId: 't1', prompt: 'Read', state: 'done', usage }] });
    assert.equal(item.description, '1 task · done · 1.0k in · 100 out · $0.0045');
    const md = transcript({ sessionId: 's1', title: 'Read', messages: [], tasks: [{ taskId: 't1', prompt: 'Read', state: 'done', usage }] });
    assert.match(md, /- \*\*done\*\* Read \(`t1`\) · 1\.0k in · 100 out · \$0\.0045/);
  });
});

describe('engines', () => {
  const res: EnginesResult = {
    engines: [
      { name: 'claude', builtin: true, command: [], isolated: true, usable: false, reason: 'not installed: npm install -g @zed-industries/claude-agent-acp' },
      { name: 'fake', builtin: false, command: ['/bin/fake'], source: 'settings', version: '1.2.3', isolated: false, usable: true },
    ],
  };

  it('lists each engine with whether it can be used, and why not', () => {
    const [claude, fake] = (res.engines ?? []).map(engineItem);
    assert.deepEqual([claude.label, claude.description, claude.detail], ['$(circle-slash) claude', 'not usable · built-in · isolated', 'not installed: npm install -g @zed-industries/claude-agent-acp']);
    assert.deepEqual([fake.label, fake.description, fake.detail], ['$(pass-filled) fake', 'usable · 1.2.3 · from settings', '/bin/fake']);
  });

  it('offers the plan\'s choice, the built-in worker and the usable engines; one that cannot be used only says why', () => {
    const items = engineItems(res, 'fake');
    assert.deepEqual(items.map((i) => [i.label, i.engine]), [
      ['As planned', ''],
      ['agentls', 'agentls'],
      ['$(check) fake', 'fake'],
      ['$(circle-slash) claude', undefined],
    ]);
    assert.match(items[3]?.problem ?? '', /^claude cannot be used: not installed/);
    assert.equal(engineItems(res, undefined)[0]?.label, '$(check) As planned');
  });

  it('shows the engine of the next task in the conversation\'s header, and the one a task ran on', () => {
    assert.match(renderHeader({ ...viewState(new Conversation(), new TaskStore(), new PendingStore(), extras), engine: 'fake' }), /data-action="engine" title="Engine: fake\.[^"]*">.*<span class="name">Engine: <\/span><span class="value">fake</);
    assert.match(renderHeader(viewState(new Conversation(), new TaskStore(), new PendingStore(), extras)), /<span class="name">Engine: <\/span><span class="value">as planned</);
    const store = new TaskStore();
    const conv = new Conversation();
    store.begin('t9', 'On the engine', { folder, engine: 'fake' });
    conv.show('t9', folder, false);
    assert.match(renderLog(viewState(conv, store, new PendingStore(), extras)), /<span class="engine">on fake<\/span>/);
    assert.equal(isFromView({ type: 'engine' }), true);
  });
});

describe('image attachments', () => {
  it('sends an image of the workspace by its path and a pasted one by its bytes', () => {
    const conv = new Conversation();
    conv.attach({ path: 'main.go', startLine: 2, endLine: 3 });
    conv.attach({ path: 'docs/shot.png', image: {} });
    conv.attach({ path: 'docs/shot.png', image: {} });
    const name = conv.pastedName('image/png');
    conv.attach({ path: name, image: { data: 'iVBORw0KGgo=', mimeType: 'image/png' } });
    assert.equal(conv.pastedName('image/jpeg'), 'image-1.jpg', 'a name per type, not taken yet');
    assert.equal(conv.pastedName('image/png'), 'image-2.png');
    assert.deepEqual(runAttachments(conv.attachments), [
      { type: 'file', path: 'main.go', range: { start: { line: 1, character: 0 }, end: { line: 3, character: 0 } } },
      { type: 'image', path: 'docs/shot.png' },
      { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png', name: 'image-1.png' },
    ]);
    const v = viewState(conv, new TaskStore(), new PendingStore(), extras);
    assert.deepEqual(v.attachments.map((a) => [a.label, a.image]), [['main.go:2-3', false], ['docs/shot.png (image)', true], ['image-1.png (image)', true]]);
    assert.deepEqual(viewState(conv, new TaskStore(), new PendingStore(), { ...extras, canAttach: false }).attachments, [], 'none offered to an agentls that takes none');
  });

  it('knows the images agentls takes by their names', () => {
    assert.deepEqual(['a.png', 'b.JPG', 'c.jpeg', 'd.gif', 'e.webp', 'f.svg', 'g.bmp', 'png'].map(isImagePath), [true, true, true, true, true, false, false, false]);
  });

  it('takes from the view only an image pasted, and an attach of an image', () => {
    assert.equal(isFromView({ type: 'paste', data: 'AAAA', mimeType: 'image/png' }), true);
    assert.equal(isFromView({ type: 'paste', data: 'AAAA', mimeType: 'text/plain' }), false);
    assert.equal(isFromView({ type: 'paste', data: 1, mimeType: 'image/png' }), false);
    assert.equal(isFromView({ type: 'attach', what: 'image' }), true);
  });
});
