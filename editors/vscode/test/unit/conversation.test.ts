import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PendingStore } from '../../src/pending';
import { advertised, Features, Subtask, TaskEvent, TaskUpdateParams } from '../../src/protocol';
import { contentSecurityPolicy, conversationHtml } from '../../src/views/conversation';
import { Conversation, runAttachments, viewState } from '../../src/views/conversationModel';
import { TaskStore } from '../../src/views/taskModel';
import { markdown } from '../../src/webview/markdown';
import { renderHeader, renderLog, renderPending } from '../../src/webview/render';
import { isFromView, ViewState } from '../../src/webview/state';

const folder = 'file:///home/me/project';
const extras = { folderName: 'project', multiRoot: false, model: 'configured', intent: '', folders: [{ path: '/home/me/project', name: 'project' }], canAttach: false, engine: '' };
const plan: Subtask[] = [
  { id: '1', content: 'Add greet', state: 'running', dependsOn: [] },
  { id: '2', content: 'Test it', state: 'pending', dependsOn: ['1'] },
];

function feed(store: TaskStore, taskId: string, events: [TaskEvent, TaskUpdateParams['state']?][]): void {
  let seq = store.get(taskId)?.seq ?? 0;
  for (const [event, state] of events) {
    store.update({ taskId, sessionId: 's1', seq: ++seq, state: state ?? 'running', subtasks: plan, event }, folder);
  }
}

function running(): { store: TaskStore; pending: PendingStore; conv: Conversation } {
  const store = new TaskStore();
  const pending = new PendingStore();
  const conv = new Conversation();
  store.begin('t1', 'Add a **greet** function', { folder });
  conv.show('t1', folder, false);
  feed(store, 't1', [
    [{ kind: 'planned', text: '1. Add greet\n2. Test it (after 1)' }],
    [{ kind: 'messageDelta', subtaskId: '1', text: 'Reading `main.go`' }],
    [{ kind: 'messageDelta', subtaskId: '1', text: ' in /home/me/project/main.go' }],
    [{ kind: 'toolCall', subtaskId: '1', tool: 'read_file', arguments: { path: 'main.go' } }],
    [{ kind: 'toolResult', subtaskId: '1', tool: 'read_file', ok: true, summary: 'package main' }],
  ]);
  return { store, pending, conv };
}

describe('the conversation', () => {
  it('streams each subtask\'s text, with paths relative, and folds its tool calls', () => {
    const { store, pending, conv } = running();
    const s = viewState(conv, store, pending, extras);
    assert.equal(s.tasks.length, 1);
    const [coordinator, one, two] = s.tasks[0]?.groups ?? [];
    assert.deepEqual(coordinator.entries.map((e) => e.kind), ['note']);
    assert.deepEqual(one.entries.map((e) => e.kind), ['text', 'tool']);
    const text = one.entries[0];
    assert.ok(text.kind === 'text');
    assert.equal(text.text, 'Reading `main.go` in main.go');
    assert.equal(text.streaming, true);
    assert.deepEqual(two.entries, []);
    assert.equal(s.running, true);
    const html = renderLog(s);
    assert.match(html, /<div class="text md streaming"><p>Reading <code>main\.go<\/code> in main\.go<\/p><\/div>/);
    assert.match(html, /<details class="tool tool-ok" data-key="t1\/1\/4"><summary><span class="mark">✓<\/span> read_file main\.go<\/summary>/);
    assert.doesNotMatch(html, /<details class="tool[^>]* open/, 'tool calls are folded');
    assert.match(html, /<strong>greet<\/strong>/, 'the prompt is rendered');
    // Opened, its arguments and its result each say what they are: neither reads as the agent's words.
    assert.match(html, /read_file main\.go<\/summary><div class="label">Arguments<\/div><pre><code>\{\n {2}&quot;path&quot;: &quot;main\.go&quot;\n\}<\/code><\/pre><div class="label">Result<\/div><div class="result">package main<\/div><\/details>/);
  });

  it('labels a failed tool call\'s result as its error', () => {
    const { store, pending, conv } = running();
    feed(store, 't1', [
      [{ kind: 'toolCall', subtaskId: '1', tool: 'read_file', arguments: { path: 'gone.go' } }],
      [{ kind: 'toolResult', subtaskId: '1', tool: 'read_file', ok: false, summary: 'no such file: gone.go' }],
    ]);
    assert.match(renderLog(viewState(conv, store, pending, extras)), /<div class="label">Error<\/div><div class="result">no such file: gone\.go<\/div>/);
  });

  it('says how the task\'s subtasks ended from agentls\'s counts, the skipped and removed ones too', () => {
    const { store, pending, conv } = running();
    const left = [{ ...plan[0], state: 'skipped' as const }, { id: '3', content: 'Write the log', state: 'done' as const, dependsOn: [] }];
    store.finish({ taskId: 't1', sessionId: 's1', state: 'done', summary: '1 of 3 subtasks done, 1 skipped, 1 removed.', subtasks: left, changes: [],
      applied: 0, rejected: 0, counts: { done: 1, skipped: 1, removed: 1, failed: 0, blocked: 0, notRun: 0 }, usage: { inputTokens: 0, outputTokens: 0 } });
    const [t] = viewState(conv, store, pending, extras).tasks;
    assert.equal(t.progress, '1/3 (1 skipped, 1 removed)');
    assert.match(renderLog(viewState(conv, store, pending, extras)),
      /<span class="progress" title="1 of 3 subtasks done, 1 skipped, 1 removed">1\/3 \(1 skipped, 1 removed\)<\/span>/);
  });

  it('shows a tool call that names workspace files by their absolute paths with them relative, and no backticks', () => {
    const { store, pending, conv } = running();
    const question = 'Which name for `greet` in /home/me/project/internal/very/deep/directory/of/the/project/main.go?';
    feed(store, 't1', [[{ kind: 'toolCall', subtaskId: '2', tool: 'ask_human', arguments: { question } }]]);
    const tool = viewState(conv, store, pending, extras).tasks[0]?.groups[2]?.entries[0];
    assert.ok(tool.kind === 'tool');
    assert.equal(tool.detail, 'ask_human Which name for greet in internal/very/deep/directory/of/the/project/main.go?');
    assert.match(tool.args, /"question": "Which name for `greet` in internal\/very\/deep\/directory\/of\/the\/project\/main\.go\?"/, 'the arguments as sent, paths relative');
  });

  it('ends the stream with the whole message', () => {
    const { store, pending, conv } = running();
    feed(store, 't1', [[{ kind: 'message', subtaskId: '1', text: 'Read it.' }]]);
    const text = viewState(conv, store, pending, extras).tasks[0]?.groups[1]?.entries.find((e) => e.kind === 'text');
    assert.deepEqual(text, { kind: 'text', id: '2', text: 'Read it.', streaming: false });
  });

  it('puts what waits on the person in its subtask, with its answers as buttons', () => {
    const { store, pending, conv } = running();
    pending.add({ kind: 'approval', folder, folderName: 'project', taskId: 't1', subtaskId: '1', text: 'run ls?', markdown: 'run `ls`?', options: ['Run', 'Always allow', 'Deny'] }, () => undefined);
    pending.add({ kind: 'question', folder, folderName: 'other', text: 'Port?', markdown: 'Port?', options: [] }, () => undefined);
    const s = viewState(conv, store, pending, extras);
    assert.equal(s.tasks[0]?.groups[1]?.pending.length, 1);
    assert.equal(s.pending.length, 1, 'a question of no task of this conversation is shown too');
    const html = renderLog(s);
    assert.match(html, /run <code>ls<\/code>\?/);
    assert.match(html, /data-action="answer" data-id="p1" data-value="Always allow">Always allow<\/button>/);
    assert.match(html, /<input type="text" class="answer" data-id="p2"/);
  });

  it('lists a proposal\'s files with their diffs, and accept, reject and review', () => {
    const html = renderPending({ id: 'p3', kind: 'proposal', text: 'update main.go', options: ['Accept', 'Reject'], files: [{ path: 'main.go', operation: 'update', diffId: 'e7' }], reviewing: false });
    assert.match(html, /data-action="diff" data-diff="e7"/);
    assert.match(html, /data-action="answer" data-id="p3" data-value="Accept"/);
    assert.match(html, /data-action="review" data-id="p3"/);
    const reviewing = renderPending({ id: 'p3', kind: 'proposal', text: 'x', options: ['Accept', 'Reject'], files: [], reviewing: true });
    assert.doesNotMatch(reviewing, /data-value="Accept"/, 'a proposal under review is answered in the preview');
  });

  it('says how many changes were applied and how many rejected, with their diffs', () => {
    const { store, pending, conv } = running();
    store.diffOf = (_f, p) => (p === 'main.go' ? 'e1' : undefined);
    feed(store, 't1', [
      [{ kind: 'changeApplied', subtaskId: '1', path: 'main.go' }],
      [{ kind: 'changeRejected', subtaskId: '1', path: 'README.md', reason: 'rejected by the user' }],
    ]);
    store.finish({
      taskId: 't1', sessionId: 's1', state: 'done', summary: 'greet added', subtasks: plan.map((x) => ({ ...x, state: 'done' })),
      changes: [{ path: 'main.go', operation: 'update', applied: true, diff: '' }, { path: 'README.md', operation: 'update', applied: false, diff: '' }],
      applied: 1, rejected: 1, counts: { done: 2, skipped: 0, removed: 0, failed: 0, blocked: 0, notRun: 0 }, usage: { inputTokens: 1200, outputTokens: 30 },
    });
    const s = viewState(conv, store, pending, extras);
    const t = s.tasks[0];
    assert.equal(t.counts, '1 applied, 1 rejected');
    assert.equal(s.running, false);
    const html = renderLog(s);
    assert.match(html, /Changes: 1 applied, 1 rejected/);
    assert.match(html, /<span class="path">main\.go<\/span> <span class="word">applied<\/span> <button[^>]*data-diff="e1"/);
    assert.match(html, /README\.md<\/span> <span class="word">rejected<\/span><div class="reason">rejected by the user<\/div>/);
    assert.doesNotMatch(html, /data-action="stop"/, 'an ended task has no Stop');
  });

  it('continues a session: a follow-up is shown after the tasks it continues', () => {
    const { store, conv } = running();
    store.finish({ taskId: 't1', sessionId: 's1', state: 'done', summary: '', subtasks: plan, changes: [], applied: 0, rejected: 0, counts: { done: 2, skipped: 0, removed: 0, failed: 0, blocked: 0, notRun: 0 }, usage: { inputTokens: 0, outputTokens: 0 } });
    assert.equal(conv.sessionId(store), 's1');
    store.begin('t2', 'And document it', { folder, sessionId: 's1' });
    conv.show('t2', folder, true);
    assert.deepEqual(conv.taskIds, ['t1', 't2']);
    conv.show('t3', folder, false);
    assert.deepEqual(conv.taskIds, ['t3'], 'a new task without the session starts a new conversation');
  });

  it('sends attachments as agent/run takes them, never written into the prompt', () => {
    const conv = new Conversation();
    conv.attach({ path: 'main.go' });
    conv.attach({ path: 'greet.go', startLine: 3, endLine: 9 });
    conv.attach({ path: 'notes.md', startLine: 4 });
    conv.attach({ path: 'main.go' });
    assert.equal(conv.attachments.length, 3, 'the same file once');
    assert.deepEqual(runAttachments(conv.attachments), [
      { type: 'file', path: 'main.go' },
      { type: 'file', path: 'greet.go', range: { start: { line: 2, character: 0 }, end: { line: 9, character: 0 } } },
      { type: 'file', path: 'notes.md', range: { start: { line: 3, character: 0 }, end: { line: 4, character: 0 } } },
    ]);
    const s = viewState(conv, new TaskStore(), new PendingStore(), { ...extras, canAttach: true });
    assert.equal(s.canAttach, true);
    assert.deepEqual(s.attachments.map((a) => a.label), ['main.go', 'greet.go:3-9', 'notes.md:4']);
  });

  it('takes attachments to be advertised only by capabilities.experimental.agent.attachments set to true', () => {
    const result = (agent: unknown): unknown => ({ capabilities: { experimental: { agent } } });
    assert.equal(advertised(result({ version: 1, attachments: true }), Features.attachments), true);
    assert.equal(advertised(result({ version: 1 }), Features.attachments), false, 'an agentls from before attachments');
    assert.equal(advertised(result({ attachments: 'yes' }), Features.attachments), false);
    assert.equal(advertised({ capabilities: {} }, Features.attachments), false);
    assert.equal(advertised(undefined, Features.attachments), false, 'not started');
  });

  it('shows no attachments when the agentls does not advertise them', () => {
    const conv = new Conversation();
    conv.attach({ path: 'main.go' });
    const s = viewState(conv, new TaskStore(), new PendingStore(), { ...extras, canAttach: false });
    assert.equal(s.canAttach, false, 'the view hides its attach buttons');
    assert.deepEqual(s.attachments, []);
  });

  it('keeps a history of prompts without repeats, bounded', () => {
    const conv = new Conversation();
    for (let i = 0; i < 60; i++) {
      conv.remember(`p${i}`);
      conv.remember(`p${i}`);
    }
    assert.equal(conv.history.length, 50);
    assert.equal(conv.history.at(-1), 'p59');
  });

  it('shows the model and the intent of the next task in its header', () => {
    const s: ViewState = { ...viewState(new Conversation(), new TaskStore(), new PendingStore(), extras), model: 'openai:gpt-4.1', intent: 'INT-1 Greeting' };
    const h = renderHeader(s);
    const text = h.replace(/<[^>]+>/g, '');
    assert.match(text, /Model: openai:gpt-4\.1/);
    assert.match(text, /Intent: INT-1 Greeting/);
    // Each chip an icon and its value, its name in the tooltip and for screen readers, not drawn.
    assert.match(h, /<button type="button" class="chip" data-action="model" title="Model: openai:gpt-4\.1\. Choose the model of the next task"><svg class="icon"[^>]*aria-hidden="true"[^>]*>.*<\/svg><span class="name">Model: <\/span><span class="value">openai:gpt-4\.1<\/span><\/button>/);
    assert.match(h, /data-action="new" title="New conversation"><svg/);
  });
});

describe('the conversation view\'s page', () => {
  it('allows only its own script, by nonce, and its own styles: nothing remote, nothing inline', () => {
    const csp = contentSecurityPolicy('https://file+.vscode-resource.vscode-cdn.net', 'abc123');
    assert.equal(csp, "default-src 'none'; style-src https://file+.vscode-resource.vscode-cdn.net; script-src 'nonce-abc123'; img-src https://file+.vscode-resource.vscode-cdn.net data:; font-src https://file+.vscode-resource.vscode-cdn.net");
    const html = conversationHtml({ cspSource: 'vscode-resource:', nonce: 'abc123', script: 'vscode-resource:/dist/webview.js', style: 'vscode-resource:/media/conversation.css' });
    assert.match(html, /<script nonce="abc123" src="vscode-resource:\/dist\/webview\.js"><\/script>/);
    assert.equal((html.match(/<script/g) ?? []).length, 1);
    assert.doesNotMatch(html, / on[a-z]+=|style="/, 'no inline handler or style');
  });

  it('takes only well-formed messages from the page', () => {
    assert.equal(isFromView({ type: 'send', text: 'hi' }), true);
    assert.equal(isFromView({ type: 'answer', id: 'p1', value: null }), true);
    assert.equal(isFromView({ type: 'answer', id: 'p1', value: 3 }), false);
    assert.equal(isFromView({ type: 'attach', what: 'disk' }), false);
    assert.equal(isFromView({ type: 'eval' }), false);
    assert.equal(isFromView('send'), false);
  });
});

describe('Markdown in the conversation', () => {
  const cases: [string, string, string][] = [
    ['escapes HTML', '<script>alert(1)</script>', '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>'],
    ['renders code spans, bold and italics', 'Use `a<b` **now**, *please*', '<p>Use <code>a&lt;b</code> <strong>now</strong>, <em>please</em></p>'],
    ['keeps snake_case words', 'set my_var_name', '<p>set my_var_name</p>'],
    ['renders a fenced block verbatim', '```go\nfunc *x*() {}\n```', '<pre data-lang="go"><code>func *x*() {}</code></pre>'],
    ['renders lists', '- one\n- two\n\n1. first', '<ul><li>one</li><li>two</li></ul><ol><li>first</li></ol>'],
    ['shows a link as text, never followed', '[docs](https://example.com/x)', '<p><span class="link" title="https://example.com/x">docs</span></p>'],
    ['escapes quotes in a link target', '[x](a"onmouseover="b)', '<p><span class="link" title="a&quot;onmouseover=&quot;b">x</span></p>'],
    ['makes headings small', '# Plan', '<h4>Plan</h4>'],
  ];
  for (const [name, input, want] of cases) {
    it(name, () => {
      assert.equal(markdown(input), want);
    });
  }
});
