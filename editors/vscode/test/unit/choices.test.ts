import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkMessage, Choices, intentItems, modelItems, undoRefusals, undoSummary } from '../../src/choices';
import { ModelsResult, UndoResult } from '../../src/protocol';

const models: ModelsResult = {
  current: 'openai:gpt-4.1-mini',
  source: 'initializationOptions.model',
  models: [
    { id: 'openai:gpt-4.1', provider: 'openai', name: 'gpt-4.1' },
    { id: 'openai:gpt-4.1-mini', provider: 'openai', name: 'gpt-4.1-mini', current: true },
    { id: 'ollama:qwen2.5-coder:7b', provider: 'ollama', name: 'qwen2.5-coder:7b' },
  ],
  providers: [
    { provider: 'openai', configured: true, models: 2 },
    { provider: 'anthropic', configured: true, models: 0, problem: 'auth', error: 'the key in ANTHROPIC_API_KEY was refused' },
    { provider: 'ollama', configured: true, models: 1 },
  ],
};

describe('the model picker', () => {
  it('offers a connection test, the configured model, then each provider\'s models with the current one marked', () => {
    const items = modelItems(models, undefined);
    assert.deepEqual(items.map((i) => i.label), [
      '$(plug) Test connection',
      '$(check) Use the configured model',
      'openai', 'gpt-4.1', '$(check) gpt-4.1-mini',
      'anthropic', '$(warning) anthropic listed no model',
      'ollama', 'qwen2.5-coder:7b',
    ]);
    assert.equal(items[4]?.description, 'openai:gpt-4.1-mini · current');
    assert.equal(items[1]?.description, 'openai:gpt-4.1-mini (from the agentls.model setting)', 'the setting as the Settings editor names it');
    assert.deepEqual(items[3]?.action, { type: 'model', id: 'openai:gpt-4.1' });
    assert.equal(items[6]?.detail, 'the key in ANTHROPIC_API_KEY was refused');
  });

  it('names the settings and the model chosen as the person knows them, in what agentls says of a model', () => {
    const none = modelItems({ current: '', currentError: 'no model configured: set initializationOptions.model (editor setting "model", e.g. "anthropic:claude-sonnet-4-5"), or AGENTLS_MODEL', models: [], providers: [] }, undefined);
    assert.equal(none[1]?.detail, 'no model configured: set the agentls.model setting (e.g. "anthropic:claude-sonnet-4-5"), or AGENTLS_MODEL');
    assert.equal(checkMessage({ model: 'openai:gpt-4o', source: 'agent/checkModel model', ok: false, message: 'model "openai:gpt-4o" (from agent/checkModel model) needs OPENAI_API_KEY' }),
      'agentls: model "openai:gpt-4o" (from the model chosen for the next tasks) needs OPENAI_API_KEY');
    assert.equal(checkMessage({ model: 'x:y', ok: false, message: 'model "x:y" (from initializationOptions.model) is unknown' }),
      'agentls: model "x:y" (from the agentls.model setting) is unknown');
    assert.equal(modelItems({ ...models, source: 'AGENTLS_MODEL' }, undefined)[1]?.description, 'openai:gpt-4.1-mini (from AGENTLS_MODEL)', 'a variable keeps its name');
  });

  it('marks the model chosen for the next tasks', () => {
    const items = modelItems(models, 'ollama:qwen2.5-coder:7b');
    const q = items.find((i) => i.action?.type === 'model' && i.action.id === 'ollama:qwen2.5-coder:7b');
    assert.equal(q?.label, '$(check) qwen2.5-coder:7b');
    assert.equal(q.description, 'ollama:qwen2.5-coder:7b · chosen for the next tasks');
    assert.equal(items[0]?.description, 'ollama:qwen2.5-coder:7b', 'the test tries the model of the next task');
    assert.equal(items[1]?.label, 'Use the configured model');
  });
});

describe('the intent picker', () => {
  it('does not offer a COMPLETED intent', () => {
    const items = intentItems({
      intents: [
        { id: 'INT-001', name: 'Greeting', status: 'IN_PROGRESS', ownedScope: ['main.go'], constraints: [], acceptanceCriteria: [], selectable: true },
        { id: 'INT-000', name: 'Setup', status: 'COMPLETED', ownedScope: [], constraints: [], acceptanceCriteria: [], selectable: false },
      ],
    }, 'INT-001');
    assert.deepEqual(items.map((i) => i.label), ['No intent', '$(check) INT-001: Greeting']);
    assert.equal(items[1]?.detail, 'scope: main.go');
  });
});

describe('an undo', () => {
  const refused: UndoResult = {
    taskId: 't1', sessionId: 's', undone: false, files: [
      { path: 'main.go', operation: 'update', undone: false, reason: 'main.go: lines 5-8 changed since the task wrote them', lines: [{ startLine: 5, endLine: 8 }] },
      { path: 'greet_test.go', operation: 'delete', undone: false, reason: 'greet_test.go: not undone, as main.go could not be and the undo was not partial' },
    ],
  };

  it('tells the files refused from those left only because of them', () => {
    const { refused: r, rest } = undoRefusals(refused);
    assert.deepEqual(r.map((f) => f.path), ['main.go']);
    assert.deepEqual(rest.map((f) => f.path), ['greet_test.go']);
  });

  it('says what it did', () => {
    assert.equal(undoSummary({ taskId: 't1', sessionId: 's', undone: true, files: [
      { path: 'main.go', operation: 'update', undone: true },
      { path: 'x.go', undone: true, reason: 'x.go is already as it was before' },
    ] }), 'undid main.go; x.go already as before');
    assert.equal(undoSummary({ taskId: 't1', sessionId: 's', undone: false, files: [
      { path: 'main.go', operation: 'update', undone: false, reason: 'main.go: lines 5-8 changed' },
      { path: 'greet_test.go', operation: 'delete', undone: true },
    ] }), 'undid greet_test.go; left main.go');
  });
});

describe('the choices of the next tasks', () => {
  it('keeps a model and an intent per folder, and forgets what is unset', async () => {
    const mem = new Map<string, unknown>();
    const c = new Choices({ get: (k) => mem.get(k), update: (k, v) => { mem.set(k, v); return Promise.resolve(); } });
    let fired = 0;
    c.onDidChange(() => fired++);
    await c.set('a', { model: 'openai:gpt-4.1', intentId: 'INT-1', intentName: 'One' });
    await c.set('b', { model: 'ollama:x' });
    await c.set('a', { intentId: undefined, intentName: undefined });
    assert.deepEqual(c.get('a'), { model: 'openai:gpt-4.1' });
    assert.deepEqual(c.get('b'), { model: 'ollama:x' });
    assert.deepEqual(c.get('c'), {});
    assert.equal(fired, 3);
  });
});
