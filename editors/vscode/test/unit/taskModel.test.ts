import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RunResult, Subtask, TaskEvent, TaskUpdateParams } from '../../src/protocol';
import { changeCounts, describeTool, Entry, formatTokens, maxEntries, oneLine, progressText, subtaskCounts, TaskStore, taskUsageText } from '../../src/views/taskModel';

const plan: Subtask[] = [
  { id: '1', content: 'Add a greet function', state: 'running', dependsOn: [] },
  { id: '2', content: 'Test it', state: 'pending', dependsOn: ['1'] },
];

function upd(seq: number, event: TaskEvent, state: TaskUpdateParams['state'] = 'running', subtasks: Subtask[] | null = plan): TaskUpdateParams {
  return { taskId: 't1', sessionId: 's1', seq, state, subtasks, event };
}

describe('TaskStore', () => {
  it('shows a task the client started before any notification, as planning', () => {
    const store = new TaskStore();
    store.begin('t1', 'Add greet');
    assert.equal(store.get('t1')?.state, 'planning');
    assert.deepEqual(store.running().map((t) => t.taskId), ['t1']);
  });

  it('applies notifications in seq order and drops older ones', () => {
    const store = new TaskStore();
    store.begin('t1', 'Add greet');
    assert.equal(store.update(upd(2, { kind: 'planned' })), true);
    assert.equal(store.update(upd(1, { kind: 'stateChanged' }, 'planning', [])), false, 'seq 1 after seq 2 is stale');
    const t = store.get('t1');
    assert.equal(t?.state, 'running');
    assert.equal(t.subtasks.length, 2);
    assert.equal(t.sessionId, 's1');
  });

  it('keeps the subtasks when a notification carries none', () => {
    const store = new TaskStore();
    store.update(upd(1, { kind: 'planned' }));
    store.update(upd(2, { kind: 'message', text: 'hi' }, 'running', null));
    assert.equal(store.get('t1')?.subtasks.length, 2);
  });

  it('tracks the current tool call of each subtask and marks its result', () => {
    const store = new TaskStore();
    store.update(upd(1, { kind: 'toolCall', subtaskId: '1', tool: 'edit_file', arguments: { path: 'main.go', old_string: 'a' } }));
    assert.equal(store.get('t1')?.activity.get('1'), 'edit_file main.go');
    store.update(upd(2, { kind: 'toolResult', subtaskId: '1', tool: 'edit_file', ok: false }));
    assert.equal(store.get('t1')?.activity.get('1'), '✗ edit_file main.go');
    store.update(upd(3, { kind: 'subtaskFinished', subtaskId: '1', summary: 'greet added' }));
    assert.equal(store.get('t1')?.activity.has('1'), false);
    assert.equal(store.get('t1')?.messages.get('1'), 'greet added');
  });

  it('joins message deltas until the whole message arrives', () => {
    const store = new TaskStore();
    store.update(upd(1, { kind: 'messageDelta', subtaskId: '1', text: 'Read' }));
    store.update(upd(2, { kind: 'messageDelta', subtaskId: '1', text: 'ing…' }));
    assert.equal(store.get('t1')?.messages.get('1'), 'Reading…');
    store.update(upd(3, { kind: 'message', subtaskId: '1', text: 'Reading main.go' }));
    store.update(upd(4, { kind: 'messageDelta', subtaskId: '1', text: 'Next' }));
    assert.equal(store.get('t1')?.messages.get('1'), 'Next');
  });

  it('holds the question while the task waits on the person', () => {
    const store = new TaskStore();
    store.update(upd(1, { kind: 'ask', subtaskId: '1', question: 'Which port?' }, 'waiting'));
    assert.equal(store.get('t1')?.question, 'Which port?');
    store.update(upd(2, { kind: 'answered', subtaskId: '1', answer: '80' }));
    assert.equal(store.get('t1')?.question, undefined);
  });

  it('shows the running totals usage events carry and takes the run result\'s total at the end', () => {
    const store = new TaskStore();
    store.update(upd(1, { kind: 'usage', inputTokens: 100, outputTokens: 10 }));
    store.update(upd(2, { kind: 'usage', inputTokens: 150, outputTokens: 15 }));
    assert.equal(store.get('t1')?.inputTokens, 150, 'the second event is the total so far, not an increment');
    assert.equal(store.get('t1')?.outputTokens, 15);
    store.finish({
      taskId: 't1', sessionId: 's1', state: 'done', summary: 'ok', subtasks: plan, changes: null, applied: 0, rejected: 0, counts: { done: 2, skipped: 0, removed: 0, failed: 0, blocked: 0, notRun: 0 },
      usage: { inputTokens: 160, outputTokens: 16 },
    });
    assert.equal(store.get('t1')?.inputTokens, 160);
  });

  it('shows the instruction files the task works under, and each compaction, in the transcript', () => {
    const store = new TaskStore();
    store.update(upd(1, { kind: 'instructions', instructions: [{ path: 'AGENTS.md', tokens: 9 }, { path: 'pkg/AGENTS.md', tokens: 1200, cut: true }, { path: 'web/CLAUDE.md', tokens: 0, cut: true }] }, 'planning', []));
    store.update(upd(2, { kind: 'compacted', subtaskId: '1', tokensBefore: 160000, tokensAfter: 42000, text: 'Compacted the context: dropped 12 old tool outputs.' }));
    const t = store.get('t1');
    assert.deepEqual(t?.instructions?.map((f) => f.path), ['AGENTS.md', 'pkg/AGENTS.md', 'web/CLAUDE.md']);
    assert.deepEqual(t.transcript.get('')?.map((e) => (e.kind === 'note' ? e.text : e.kind)),
      ['Instructions: AGENTS.md (9 tokens), pkg/AGENTS.md (cut at 1.2k tokens), web/CLAUDE.md (left out)']);
    assert.deepEqual(t.transcript.get('1')?.map((e) => (e.kind === 'note' ? e.text : e.kind)),
      ['Context compacted: 160k → 42k tokens. Compacted the context: dropped 12 old tool outputs.']);
  });

  it('shows what the cache read of the task\'s input', () => {
    const store = new TaskStore();
    store.update(upd(1, { kind: 'usage', inputTokens: 12000, outputTokens: 300, cacheReadTokens: 9500 }));
    assert.equal(taskUsageText(store.get('t1')!), 'Tokens: 12k in (9.5k cached) · 300 out');
    store.finish({
      taskId: 't1', sessionId: 's1', state: 'done', summary: 'ok', subtasks: plan, changes: null, applied: 0, rejected: 0,
      counts: { done: 2, skipped: 0, removed: 0, failed: 0, blocked: 0, notRun: 0 },
      usage: { inputTokens: 13000, outputTokens: 310, cacheReadTokens: 10400 },
    });
    assert.equal(taskUsageText(store.get('t1')!), 'Tokens: 13k in (10k cached) · 310 out');
  });

  it('never turns an ended task back to running on a late notification', () => {
    const store = new TaskStore();
    store.update(upd(5, { kind: 'stateChanged' }, 'done'));
    store.update(upd(6, { kind: 'usage', inputTokens: 1 }, 'running'));
    assert.equal(store.get('t1')?.state, 'done');
  });

  it('records the changes and the summary of the run result', () => {
    const store = new TaskStore();
    store.begin('t1', 'p');
    // An older agentls: no subtask counts.
    store.finish({
      taskId: 't1', sessionId: 's1', state: 'done', summary: 'greet added', subtasks: null,
      changes: [{ path: 'main.go', operation: 'update', applied: true, diff: '--- a' }], applied: 1, rejected: 0,
      usage: { inputTokens: 0, outputTokens: 0 },
    } as RunResult);
    const t = store.get('t1');
    assert.equal(t?.summary, 'greet added');
    assert.deepEqual(t.changes, [{ path: 'main.go', operation: 'update', applied: true, diff: '--- a' }]);
    assert.deepEqual(store.running(), []);
    assert.equal(changeCounts(t), '1 applied', 'an older agentls without counts: counted from the changes');
  });

  it('counts the changes applied and rejected as the run says', () => {
    const store = new TaskStore();
    store.update(upd(1, { kind: 'stateChanged', state: 'done', applied: 2, rejected: 1 }, 'done'));
    const t = store.get('t1');
    assert.ok(t);
    assert.equal(changeCounts(t), '2 applied, 1 rejected', 'the last update says it before the reply');
    store.finish({
      taskId: 't1', sessionId: 's1', state: 'done', summary: '', subtasks: null,
      changes: [{ path: 'a', operation: 'update', applied: false, diff: '' }], applied: 0, rejected: 1, counts: { done: 2, skipped: 0, removed: 0, failed: 0, blocked: 0, notRun: 0 },
      usage: { inputTokens: 0, outputTokens: 0 },
    });
    assert.equal(changeCounts(t), '1 rejected', 'a rejected change is not a change made');
    assert.equal(changeCounts({ changes: [], applied: 0, rejected: 0 }), '');
  });

  it('keeps what each subtask did, in order: text, tool calls with results, changes, questions', () => {
    const store = new TaskStore();
    store.diffOf = (folder, path) => `${folder}:${path}`;
    store.update(upd(1, { kind: 'messageDelta', subtaskId: '1', text: 'Look' }), 'F');
    store.update(upd(2, { kind: 'message', subtaskId: '1', text: 'Looking.' }));
    store.update(upd(3, { kind: 'toolCall', subtaskId: '1', tool: 'edit_file', arguments: { path: 'a.go' } }));
    store.update(upd(4, { kind: 'toolResult', subtaskId: '1', tool: 'edit_file', ok: false, summary: 'no match' }));
    store.update(upd(5, { kind: 'changeApplied', subtaskId: '1', path: 'a.go' }));
    store.update(upd(6, { kind: 'changeHeld', subtaskId: '1', path: 'b.go' }));
    store.update(upd(7, { kind: 'ask', subtaskId: '1', question: 'Which?', options: ['x'] }, 'waiting'));
    store.update(upd(8, { kind: 'answered', subtaskId: '1', answer: 'x' }));
    const entries = store.get('t1')?.transcript.get('1');
    const want: Entry[] = [
      { kind: 'text', id: '1', text: 'Looking.', streaming: false },
      { kind: 'tool', id: '3', tool: 'edit_file', detail: 'edit_file a.go', arguments: { path: 'a.go' }, ok: false, result: 'no match' },
      { kind: 'change', id: '5', path: 'a.go', status: 'applied', diffId: 'F:a.go' },
      { kind: 'change', id: '6', path: 'b.go', status: 'held' },
      { kind: 'ask', id: '7', question: 'Which?', options: ['x'], answered: true, answer: 'x' },
    ];
    assert.deepEqual(entries, want);
  });

  it('bounds what it keeps of a subtask', () => {
    const store = new TaskStore();
    for (let i = 1; i <= maxEntries + 10; i++) {
      store.update(upd(i, { kind: 'message', subtaskId: '1', text: `m${i}` }));
    }
    const entries = store.get('t1')?.transcript.get('1') ?? [];
    assert.equal(entries.length, maxEntries);
    assert.deepEqual(entries[0], { kind: 'text', id: '11', text: 'm11', streaming: false });
  });

  it('lets a request that waits on the person claim the ask event that announced it, once', () => {
    const store = new TaskStore();
    store.update(upd(1, { kind: 'ask', subtaskId: '1', question: 'Run `ls`?', options: ['Run', 'Deny'] }, 'waiting'), 'F');
    store.update(upd(2, { kind: 'ask', subtaskId: '2', question: 'Which?', options: [] }, 'waiting'), 'F');
    assert.equal(store.claimAsk('G', () => true), undefined, 'another folder\'s request');
    assert.equal(store.claimAsk('F', (a) => a.question === 'Which?')?.subtaskId, '2');
    assert.equal(store.claimAsk('F', (a) => a.question === 'Which?'), undefined, 'claimed once');
    store.update(upd(3, { kind: 'answered', subtaskId: '1', answer: 'Run' }));
    assert.equal(store.claimAsk('F', () => true), undefined, 'an answered ask is gone');
  });

  it('marks a task failed when its request fails', () => {
    const store = new TaskStore();
    store.begin('t1', 'p');
    store.fail('t1', 'model provider unavailable');
    assert.equal(store.get('t1')?.state, 'failed');
    assert.equal(store.get('t1')?.error, 'model provider unavailable');
  });

  it('keeps the newest tasks first and forgets the oldest past its bound', () => {
    const store = new TaskStore(2);
    store.begin('a', 'A');
    store.begin('b', 'B');
    store.begin('c', 'C');
    assert.deepEqual(store.tasks().map((t) => t.taskId), ['c', 'b']);
    assert.equal(store.get('a'), undefined);
  });

  it('tells its listeners about every change', () => {
    const store = new TaskStore();
    let n = 0;
    const sub = store.onDidChange(() => n++);
    store.begin('t1', 'p');
    store.update(upd(1, { kind: 'planned' }));
    store.update(upd(1, { kind: 'planned' }));
    sub.dispose();
    store.update(upd(2, { kind: 'planned' }));
    assert.equal(n, 2, 'a stale notification and one after dispose are not told');
  });

  it('clears ended tasks and keeps running ones', () => {
    const store = new TaskStore();
    store.begin('a', 'A');
    store.begin('b', 'B');
    store.fail('a', 'x');
    store.clearFinished();
    assert.deepEqual(store.tasks().map((t) => t.taskId), ['b']);
  });
});

describe('view helpers', () => {
  it('describes a tool call by its most telling argument', () => {
    assert.equal(describeTool('run_command', { command: 'go test ./...' }), 'run_command go test ./...');
    assert.equal(describeTool('finish', {}), 'finish');
    assert.equal(describeTool('read_file', null), 'read_file');
  });
  it('says how an ended task\'s subtasks ended from agentls\'s counts, the skipped and removed ones too', () => {
    // Subtask 1 skipped, 2 removed, 3 added and done: two subtasks are left
    // in the list, both settled, yet only one was done.
    const store = new TaskStore();
    const left: Subtask[] = [{ id: '1', content: 'a', state: 'skipped', dependsOn: [] }, { id: '3', content: 'c', state: 'done', dependsOn: [] }];
    const counts = { done: 1, skipped: 1, removed: 1, failed: 0, blocked: 0, notRun: 0 };
    store.update(upd(1, { kind: 'stateChanged', state: 'done', counts }, 'done', left));
    const t = store.get('t1');
    assert.ok(t);
    assert.equal(progressText(t), '1/3 (1 skipped, 1 removed)', 'from the end event, before the reply');
    assert.equal(subtaskCounts(t), '1 of 3 subtasks done, 1 skipped, 1 removed');
    store.finish({ taskId: 't1', sessionId: 's1', state: 'stopped', summary: '', subtasks: left, changes: [], applied: 0, rejected: 0,
      counts: { done: 0, skipped: 0, removed: 0, failed: 1, blocked: 0, notRun: 1 }, usage: { inputTokens: 0, outputTokens: 0 } });
    assert.equal(progressText(t), '0/2 (1 failed, 1 not run)', 'the reply has the last word');
    assert.equal(subtaskCounts({}), '', 'nothing before the end');
    const none = { done: 0, skipped: 0, removed: 0, failed: 0, blocked: 0, notRun: 0 };
    store.finish({ taskId: 't2', sessionId: 's1', state: 'failed', summary: 'Planning failed: model down', subtasks: [], changes: [], applied: 0, rejected: 0,
      counts: none, usage: { inputTokens: 0, outputTokens: 0 } });
    const failed = store.get('t2');
    assert.ok(failed);
    assert.equal(progressText(failed), '', 'a failed plan had no subtask to count');
    assert.equal(subtaskCounts(failed), '');
  });
  it('counts ended subtasks', () => {
    const store = new TaskStore();
    store.update(upd(1, { kind: 'planned' }, 'running', [
      { id: '1', content: 'a', state: 'done', dependsOn: [] }, { id: '2', content: 'b', state: 'blocked', dependsOn: [] }, { id: '3', content: 'c', state: 'running', dependsOn: [] },
    ]));
    const t = store.get('t1');
    assert.ok(t);
    assert.equal(progressText(t), '2/3');
  });
  it('formats token counts compactly', () => {
    assert.deepEqual([950, 1234, 12345, 2_500_000].map(formatTokens), ['950', '1.2k', '12k', '2.5M']);
  });
  it('cuts a long first line at a character boundary', () => {
    assert.equal(oneLine('héllo wörld\nsecond', 6), 'héllo…');
    assert.equal(oneLine('short', 10), 'short');
  });
});
