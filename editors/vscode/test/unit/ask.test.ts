import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as vscode from 'vscode';
import { ApproveDeps, ask, AskDeps, dismissItem, InboxDeps, showMessageRequest } from '../../src/handlers/ask';
import { PendingStore } from '../../src/pending';
import { ShowMessageRequestParams } from '../../src/protocol';
import { TaskStore } from '../../src/views/taskModel';
import { until } from './fakes';

const folder = { key: 'file:///home/me/project', name: 'project', fsPath: '/home/me/project' };

function inbox(): InboxDeps {
  return { folder, pending: new PendingStore(), tasks: new TaskStore(), folders: () => [{ path: folder.fsPath, name: folder.name }] };
}

/** A quick pick and input box that answer what they are told, or stay open until closed. */
function prompts(pick: string | undefined, typed: string | undefined): AskDeps & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    showQuickPick: (items, options) => {
      calls.push(`pick:${items.join('|')}:${options.placeHolder ?? ''}`);
      return Promise.resolve(pick);
    },
    showInputBox: (options) => {
      calls.push(`input:${options.prompt ?? ''}`);
      return Promise.resolve(typed);
    },
  };
}

const token = (): vscode.CancellationToken => new vscode.CancellationTokenSource().token;

describe('agent/ask', () => {
  it('offers the options in a quick pick and answers the one picked', async () => {
    const d = { ...inbox(), ...prompts('Postgres', undefined) };
    const res = await ask({ question: 'Which database?', options: ['SQLite', 'Postgres'] }, d, token());
    assert.deepEqual(res, { answer: 'Postgres' });
    assert.deepEqual(d.calls, [`pick:SQLite|Postgres|${dismissItem}:Which database?`]);
    assert.equal(d.pending.all().length, 0, 'nothing waits once answered');
  });

  it('asks in an input box when there are no options', async () => {
    const d = { ...inbox(), ...prompts(undefined, 'port 8080') };
    assert.deepEqual(await ask({ question: 'Which port?' }, d, token()), { answer: 'port 8080' });
    assert.match(d.calls[0] ?? '', /^input:Which port\?/);
  });

  it('keeps the question waiting when its quick pick is closed, and takes the answer given elsewhere', async () => {
    const d = { ...inbox(), ...prompts(undefined, undefined) };
    const res = ask({ question: 'Sure?', options: ['yes', 'no'] }, d, token());
    await until('the question to wait', () => d.pending.all().length === 1 && d.calls.length === 1);
    const p = d.pending.all()[0];
    assert.equal(p.kind, 'question');
    assert.equal(d.pending.answer(p.id, 'no'), 'answered');
    assert.deepEqual(await res, { answer: 'no' });
  });

  it('answers null when the person dismisses the question on purpose', async () => {
    const d = { ...inbox(), ...prompts(dismissItem, undefined) };
    assert.deepEqual(await ask({ question: 'Sure?', options: ['yes'] }, d, token()), { answer: null });
  });

  it('answers an empty string typed on purpose as an empty string, not as dismissal', async () => {
    assert.deepEqual(await ask({ question: 'Suffix?' }, { ...inbox(), ...prompts(undefined, '') }, token()), { answer: '' });
  });

  it('is withdrawn, unanswered, when agentls cancels it', async () => {
    const d = { ...inbox(), ...prompts(undefined, undefined) };
    const cts = new vscode.CancellationTokenSource();
    const res = ask({ question: 'Why?' }, d, cts.token);
    await until('the question to wait', () => d.pending.all().length === 1);
    cts.cancel();
    assert.deepEqual(await res, { answer: null });
    assert.equal(d.pending.all().length, 0);
  });

  it('belongs to the task and subtask whose ask event announced it', async () => {
    const d = { ...inbox(), ...prompts(undefined, undefined) };
    d.tasks.update({ taskId: 't1', sessionId: 's', seq: 1, state: 'waiting', subtasks: [], event: { kind: 'ask', subtaskId: '2', question: 'Which name?', options: ['a'] } }, folder.key);
    void ask({ question: 'Which name?', options: ['a'] }, d, token());
    await until('the question to wait', () => d.pending.all().length === 1);
    assert.equal(d.pending.all()[0]?.taskId, 't1');
    assert.equal(d.pending.all()[0]?.subtaskId, '2');
  });
});

describe('window/showMessageRequest', () => {
  function approver(answer: string | undefined): ApproveDeps & { shown: string[] } {
    const shown: string[] = [];
    return {
      shown,
      notify: (_type, message, actions) => {
        shown.push(`${message} [${actions.join('|')}]`);
        return Promise.resolve(answer);
      },
    };
  }
  const approval: ShowMessageRequestParams = {
    type: 3,
    message: 'agentls wants to run `go test ./...` in /home/me/project',
    actions: [{ title: 'Run' }, { title: 'Always allow' }, { title: 'Deny' }],
  };

  it('shows the approval as plain text with its actions, and answers the one picked', async () => {
    const d = { ...inbox(), ...approver('Run') };
    assert.deepEqual(await showMessageRequest(approval, d, token()), { title: 'Run' });
    assert.deepEqual(d.shown, ['agentls wants to run go test ./... in project [Run|Always allow|Deny]']);
  });

  it('keeps the approval waiting when its notification is closed or times out', async () => {
    const d = { ...inbox(), ...approver(undefined) };
    const res = showMessageRequest(approval, d, token());
    await until('the approval to wait', () => d.pending.all().length === 1);
    const p = d.pending.all()[0];
    assert.equal(p.kind, 'approval');
    assert.equal(p.text, 'agentls wants to run go test ./... in project');
    assert.equal(p.markdown, 'agentls wants to run `go test ./...` in project', 'the views that render Markdown keep the code span');
    assert.equal(d.pending.answer(p.id, 'Maybe'), 'invalid', 'only the actions offered answer it');
    assert.equal(d.pending.answer(p.id, 'Deny'), 'answered');
    assert.deepEqual(await res, { title: 'Deny' });
  });

  it('takes the task of the approval from its ask event', async () => {
    const d = { ...inbox(), ...approver(undefined) };
    d.tasks.update({
      taskId: 't1', sessionId: 's', seq: 1, state: 'waiting', subtasks: [],
      event: { kind: 'ask', subtaskId: '1', question: 'Run `go test ./...`?', options: ['Run', 'Always allow', 'Deny'] },
    }, folder.key);
    void showMessageRequest(approval, d, token());
    await until('the approval to wait', () => d.pending.all().length === 1);
    assert.equal(d.pending.all()[0]?.taskId, 't1');
    assert.equal(d.pending.all()[0]?.subtaskId, '1');
  });

  it('answers a message without actions null at once', async () => {
    const d = { ...inbox(), ...approver(undefined) };
    assert.equal(await showMessageRequest({ type: 2, message: 'note', actions: null }, d, token()), null);
    assert.equal(d.pending.all().length, 0);
  });

  it('is withdrawn when agentls cancels it (the task stopped)', async () => {
    const d = { ...inbox(), ...approver(undefined) };
    const cts = new vscode.CancellationTokenSource();
    const res = showMessageRequest(approval, d, cts.token);
    await until('the approval to wait', () => d.pending.all().length === 1);
    cts.cancel();
    assert.equal(await res, null);
    assert.equal(d.pending.all().length, 0);
  });
});
