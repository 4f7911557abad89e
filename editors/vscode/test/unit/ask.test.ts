import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as vscode from 'vscode';
import { ask, AskDeps } from '../../src/handlers/ask';

function deps(pick: string | undefined, typed: string | undefined): AskDeps & { calls: string[] } {
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

const token = new vscode.CancellationTokenSource().token;

describe('agent/ask', () => {
  it('offers the options in a quick pick and answers the one picked', async () => {
    const d = deps('Postgres', undefined);
    const res = await ask({ question: 'Which database?', options: ['SQLite', 'Postgres'] }, d, token);
    assert.deepEqual(res, { answer: 'Postgres' });
    assert.deepEqual(d.calls, ['pick:SQLite|Postgres:Which database?']);
  });

  it('asks in an input box when there are no options', async () => {
    const d = deps(undefined, 'port 8080');
    const res = await ask({ question: 'Which port?' }, d, token);
    assert.deepEqual(res, { answer: 'port 8080' });
    assert.deepEqual(d.calls, ['input:Which port?']);
  });

  it('answers null when the person dismisses the question', async () => {
    assert.deepEqual(await ask({ question: 'Sure?', options: ['yes'] }, deps(undefined, undefined), token), { answer: null });
    assert.deepEqual(await ask({ question: 'Why?' }, deps(undefined, undefined), token), { answer: null });
  });

  it('answers an empty string typed on purpose as an empty string, not as dismissal', async () => {
    assert.deepEqual(await ask({ question: 'Suffix?' }, deps(undefined, ''), token), { answer: '' });
  });
});
