import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildPrompt, maxSelectionChars } from '../../src/prompt';
import { Usage } from '../../src/protocol';
import { sessionItem, traceItem, transcript } from '../../src/views/sessions';

const noUsage: Usage = { inputTokens: 0, outputTokens: 0 };

describe('buildPrompt', () => {
  it('sends the request alone without a selection', () => {
    assert.equal(buildPrompt('  Fix the bug ', undefined), 'Fix the bug');
  });
  it('adds the selection with its place as a fenced block', () => {
    const p = buildPrompt('Explain', { path: 'src/a.ts', languageId: 'typescript', startLine: 3, endLine: 4, text: 'let a = 1;\nlet b = 2;' });
    assert.equal(p, 'Explain\n\nSelected in src/a.ts, lines 3-4:\n```typescript\nlet a = 1;\nlet b = 2;\n```');
  });
  it('uses a longer fence than any backtick run in the selection', () => {
    const p = buildPrompt('x', { path: 'README.md', languageId: 'markdown', startLine: 1, endLine: 1, text: '````go\n````' });
    assert.match(p, /line 1:\n`````markdown\n````go\n````\n`````$/);
  });
  it('cuts a huge selection and says so', () => {
    const p = buildPrompt('x', { path: 'a', languageId: '', startLine: 1, endLine: 1, text: 'a'.repeat(maxSelectionChars + 5) });
    assert.match(p, /selection cut at 20000 characters/);
    assert.ok(p.length < maxSelectionChars + 200);
  });
});

describe('sessions and trace rendering', () => {
  it('lists a session with its task count and last state', () => {
    const item = sessionItem({
      sessionId: 's1', title: 'Add greet', createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-02T00:00:00Z', usage: noUsage,
      tasks: [{ taskId: 't1', prompt: 'a', state: 'done', usage: noUsage }, { taskId: 't2', prompt: 'b', state: 'failed', usage: noUsage }],
    });
    assert.deepEqual(item, { sessionId: 's1', label: 'Add greet', description: '2 tasks · failed', detail: 'updated 2026-01-02T00:00:00Z' });
  });
  it('renders a transcript with tasks and messages', () => {
    const md = transcript({
      sessionId: 's1', title: 'Add greet',
      tasks: [{ taskId: 't1', prompt: 'Add greet', state: 'done', usage: noUsage }],
      messages: [{ role: 'user', text: 'Add greet', taskId: 't1', time: 'T1' }, { role: 'assistant', text: 'Done.', taskId: 't1', subtaskId: '1', time: 'T2' }],
    });
    assert.match(md, /^# Add greet\n/);
    assert.match(md, /- \*\*done\*\* Add greet \(`t1`\)/);
    assert.match(md, /### assistant · subtask 1\n\n_T2_\n\nDone\./);
  });
  it('renders a trace entry with its line spans', () => {
    const item = traceItem({
      id: 'e1', time: 'T', intentId: null, sessionId: 's1', taskId: 't1', subtaskId: '1', model: 'script:x',
      path: 'main.go', operation: 'update', ranges: [{ startLine: 3, endLine: 5, contentHash: 'sha256:x' }, { startLine: 9, endLine: 9, contentHash: 'sha256:y' }],
      fileHash: 'sha256:z',
    });
    assert.equal(item.label, 'update main.go:3-5,9');
    assert.equal(item.detail, 'task t1 · subtask 1 · session s1');
  });
});
