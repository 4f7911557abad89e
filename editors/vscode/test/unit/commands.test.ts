// The commands as the extension wires them (commands/index.ts), over fake
// folder agents and a scripted person: every command of package.json is
// registered once, and each concern's module does what its command says.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { Choices } from '../../src/choices';
import { Requests } from '../../src/commands/agents';
import { nodeOf, pendingId, taskOf } from '../../src/commands/args';
import { answerValue } from '../../src/commands/approvals';
import { wire, Wired } from '../../src/commands';
import { modelName } from '../../src/commands/pickers';
import { EditLog } from '../../src/edits';
import { defaultAskDeps } from '../../src/handlers/ask';
import { Inbox } from '../../src/inbox';
import { Pending, PendingStore } from '../../src/pending';
import { RunParams, RunResult, UndoParams } from '../../src/protocol';
import { Conversation } from '../../src/views/conversationModel';
import { TaskStore } from '../../src/views/taskModel';
import { until } from './fakes';
import { FakeAgent, fakeAgents, Person, ResponseError } from './person';
import * as stub from './vscode-stub/vscode';

/** Everything the commands are wired to, faked, and the commands registered. */
interface World {
  person: Person;
  agent: FakeAgent;
  tasks: TaskStore;
  pending: PendingStore;
  choices: Choices;
  conversation: Conversation;
  keys: Map<string, string>;
  keysChanged: stub.EventEmitter<void>;
  view: { refreshes: number; shows: number; reveals: number; focuses: number };
  output: { shown: number };
  state: Map<string, unknown>;
  wired: Wired;
  /** run runs a command as VS Code does, to its end. */
  run(id: string, ...args: unknown[]): Promise<unknown>;
}

const worlds: World[] = [];

afterEach(() => {
  for (const w of worlds.splice(0)) {
    for (const d of w.wired.disposables) {
      d.dispose();
    }
  }
  stub.commands.executed.length = 0;
  stub.window.treeViews.length = 0;
  stub.window.activeTextEditor = undefined;
});

function world(...folders: FakeAgent[]): World {
  const person = new Person();
  const list = folders.length > 0 ? folders : [new FakeAgent('project')];
  const agents = fakeAgents(...list);
  const tasks = new TaskStore();
  const pending = new PendingStore();
  const edits = new EditLog();
  const state = new Map<string, unknown>();
  const memento = {
    get: (k: string) => state.get(k),
    update: (k: string, v: unknown) => {
      state.set(k, v);
      return Promise.resolve();
    },
  };
  const choices = new Choices(memento);
  const conversation = new Conversation();
  const keys = new Map<string, string>();
  const keysChanged = new stub.EventEmitter<void>();
  const view = { refreshes: 0, shows: 0, reveals: 0, focuses: 0 };
  const output = { shown: 0 };
  const wired = wire({
    agents,
    output: {
      show: () => {
        output.shown++;
      },
    },
    tasks,
    pending,
    edits,
    choices,
    conversation,
    inbox: new Inbox(pending, edits, defaultAskDeps()),
    keys: {
      set: (env, key) => {
        keys.set(env, key);
        return Promise.resolve();
      },
      clear: (env) => {
        keys.delete(env);
        return Promise.resolve();
      },
      has: (env) => Promise.resolve(keys.has(env)),
      onDidChange: (l) => keysChanged.event(l),
    },
    history: memento,
    view: {
      refresh: () => {
        view.refreshes++;
      },
      focus: () => {
        view.focuses++;
      },
      reveal: () => {
        view.reveals++;
        return Promise.resolve();
      },
      show: () => {
        view.shows++;
        return Promise.resolve();
      },
    },
  });
  const w: World = {
    person,
    agent: list[0],
    tasks,
    pending,
    choices,
    conversation,
    keys,
    keysChanged,
    view,
    output,
    state,
    wired,
    run: (id, ...args) => stub.commands.executeCommand(id, ...args),
  };
  worlds.push(w);
  return w;
}

/** runResult is agentls's answer to agent/run, ended as state says. */
function runResult(p: RunParams, state: RunResult['state'], summary = '', changes: RunResult['changes'] = []): RunResult {
  return { taskId: p.taskId ?? '', sessionId: 's1', state, summary, subtasks: [], changes, applied: 0, rejected: 0, counts: { done: 0, skipped: 0, removed: 0, failed: 0, blocked: 0, notRun: 0 }, usage: { inputTokens: 10, outputTokens: 5 } };
}

/** ended puts an ended task of the agent's folder in the store. */
function ended(w: World, taskId: string, prompt: string, changes: RunResult['changes'] = []): void {
  w.tasks.begin(taskId, prompt, { folder: w.agent.key });
  w.tasks.finish(runResult({ prompt, taskId }, 'done', '', changes));
}

function approval(w: World, options: string[], answered: (string | null)[]): Pending {
  return w.pending.add({ kind: 'approval', folder: w.agent.key, folderName: 'project', text: 'Run go test ./...?', markdown: 'Run `go test ./...`?', options }, (v) => {
    answered.push(v);
  });
}

describe('the commands', () => {
  it('registers every command package.json contributes, each once', () => {
    world();
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../package.json'), 'utf8')) as { contributes: { commands: { command: string }[] } };
    const contributed = pkg.contributes.commands.map((c) => c.command).sort();
    const registered = [...stub.commands.registered.keys()].sort();
    assert.deepEqual(registered, contributed);
    assert.equal(contributed.length, 38);
  });

  it('leaves no command behind once disposed of', () => {
    const w = world();
    for (const d of w.wired.disposables) {
      d.dispose();
    }
    worlds.length = 0;
    assert.deepEqual([...stub.commands.registered.keys()], []);
  });
});

describe('what a command was given', () => {
  it('reads a task id, a row of the Tasks view, or an object with a task id', () => {
    assert.deepEqual(nodeOf('t1'), { kind: 'task', taskId: 't1' });
    assert.deepEqual(nodeOf({ kind: 'subtask', taskId: 't1', subtaskId: '2' }), { kind: 'subtask', taskId: 't1', subtaskId: '2' });
    assert.deepEqual(nodeOf({ taskId: 't1', other: true }), { kind: 'task', taskId: 't1' });
    assert.equal(nodeOf(undefined), undefined);
    assert.equal(nodeOf({ taskId: 7 }), undefined);
  });

  it('takes the newest running or ended task when a command names none', () => {
    const tasks = new TaskStore();
    tasks.begin('old', 'first');
    tasks.finish({ taskId: 'old', sessionId: '', state: 'done', summary: '', subtasks: [], changes: [], applied: 0, rejected: 0, counts: { done: 0, skipped: 0, removed: 0, failed: 0, blocked: 0, notRun: 0 }, usage: { inputTokens: 0, outputTokens: 0 } });
    tasks.begin('new', 'second');
    assert.equal(taskOf(tasks, undefined, true)?.taskId, 'new');
    assert.equal(taskOf(tasks, undefined, false)?.taskId, 'old');
    assert.equal(taskOf(tasks, { kind: 'change', taskId: 'old', index: 0 }, true)?.taskId, 'old');
  });

  it('takes the first that waits when a command names no waiting item', () => {
    const pending = new PendingStore();
    assert.equal(pendingId(pending, undefined), undefined);
    const p = pending.add({ kind: 'question', folder: '', folderName: '', text: 'Which?', markdown: 'Which?', options: [] }, () => undefined);
    assert.equal(pendingId(pending, undefined), p.id);
    assert.equal(pendingId(pending, { kind: 'pending', id: 'other' }), 'other');
  });
});

describe('approvals and questions', () => {
  it('answers an approval by the place of its action when agentls words it otherwise', async () => {
    const w = world();
    const answered: (string | null)[] = [];
    const p = approval(w, ['Yes, run it', 'Always', 'No'], answered);
    assert.equal(answerValue(p, 'Always allow'), 'Always');
    await w.run('agentls.approve.always', { kind: 'pending', id: p.id });
    assert.deepEqual(answered, ['Always']);
  });

  it('answers the first that waits from the palette', async () => {
    const w = world();
    const answered: (string | null)[] = [];
    approval(w, ['Run', 'Always allow', 'Deny'], answered);
    await w.run('agentls.approve.deny');
    assert.deepEqual(answered, ['Deny']);
  });

  it('dismisses a question without an answer', async () => {
    const w = world();
    const answered: (string | null)[] = [];
    const q = w.pending.add({ kind: 'question', folder: w.agent.key, folderName: 'project', text: 'Which database?', markdown: 'Which database?', options: ['SQLite'] }, (v) => {
      answered.push(v);
    });
    await w.run('agentls.question.dismiss', { kind: 'pending', id: q.id });
    assert.deepEqual(answered, [null]);
  });

  it('opens the Tasks view when nothing waits', async () => {
    const w = world();
    await w.run('agentls.showPending');
    assert.ok(stub.commands.executed.some(([id]) => id === 'agentls.tasks.focus'));
  });
});

describe('proposals and changes', () => {
  it('accepts the proposal of its row', async () => {
    const w = world();
    const answered: (string | null)[] = [];
    const p = w.pending.add({ kind: 'proposal', folder: w.agent.key, folderName: 'project', text: 'main.go', markdown: 'main.go', options: ['Accept', 'Reject'] }, (v) => {
      answered.push(v);
    });
    await w.run('agentls.proposal.accept', { kind: 'pending', id: p.id });
    assert.deepEqual(answered, ['Accept']);
  });

  it('shows the diff agentls reported for a change this window kept no text of', async () => {
    const w = world();
    ended(w, 't1', 'Fix it', [{ path: 'main.go', operation: 'update', applied: true, diff: '--- a/main.go\n+++ b/main.go\n' }]);
    stub.workspace.opened.length = 0;
    await w.run('agentls.showChange', { kind: 'change', taskId: 't1', index: 0 });
    assert.deepEqual(stub.workspace.opened, [{ language: 'diff', content: '--- a/main.go\n+++ b/main.go\n' }]);
  });
});

describe('running a task', () => {
  it('runs what the person typed with the model, intent and engine chosen for the folder, and says how it ended', async () => {
    const w = world();
    await w.choices.set(w.agent.key, { model: 'script:/home/me/demo.json', intentId: 'INT-1', engine: 'fake' });
    w.agent.answers.set('agent/run', (p: RunParams) => runResult(p, 'done', 'Added the flag'));
    w.person.will('Add a --verbose flag', undefined);
    await w.run('agentls.runTask');
    const sent = w.agent.sent.find((s) => s.method === 'agent/run')?.params as RunParams;
    assert.equal(sent.prompt, 'Add a --verbose flag');
    assert.deepEqual({ model: sent.model, intentId: sent.intentId, engine: sent.engine }, { model: 'script:/home/me/demo.json', intentId: 'INT-1', engine: 'fake' });
    const t = w.tasks.get(sent.taskId ?? '');
    assert.equal(t?.state, 'done');
    assert.deepEqual(w.conversation.taskIds, [sent.taskId]);
    assert.equal(w.view.shows, 1, 'the conversation comes forward');
    assert.deepEqual(w.person.shown.at(-1), { kind: 'info', text: 'agentls: task done: Added the flag', actions: ['Follow Up…', 'Show Session'] });
  });

  it('forgets an intent agentls refuses, and offers to choose another', async () => {
    const w = world();
    await w.choices.set(w.agent.key, { intentId: 'INT-9', intentName: 'gone' });
    w.agent.answers.set('agent/run', () => {
      throw new ResponseError(-32602, 'invalid params: intentId "INT-9" is not an intent of .orchestration/active_intents.yaml');
    });
    w.person.will('Do it', undefined);
    await w.run('agentls.runTask');
    assert.equal(w.choices.get(w.agent.key).intentId, undefined);
    const shown = w.person.shown.at(-1);
    assert.equal(shown?.kind, 'error');
    assert.match(shown.text, /\(the intent is no longer chosen\)$/);
    assert.deepEqual(shown.actions, ['Choose Intent…']);
    assert.equal(w.tasks.latest()?.state, 'failed');
  });

  it('keeps the intent when the task failed for another reason', async () => {
    const w = world();
    await w.choices.set(w.agent.key, { intentId: 'INT-1' });
    w.agent.answers.set('agent/run', () => {
      throw new Error('the connection closed');
    });
    w.person.will('Do it');
    await w.run('agentls.runTask');
    assert.equal(w.choices.get(w.agent.key).intentId, 'INT-1');
    assert.deepEqual(w.person.texts().at(-1), 'error: agentls: the task failed: the connection closed');
  });

  it('runs on the engine picked, which does not become the folder\'s choice', async () => {
    const w = world();
    w.agent.answers.set('agent/engines', { engines: [{ name: 'fake', builtin: false, command: ['fake-acp'], isolated: false, usable: true }] });
    w.agent.answers.set('agent/run', (p: RunParams) => runResult(p, 'done'));
    w.person.will('fake', 'Say hello', undefined);
    await w.run('agentls.runTaskOnEngine');
    assert.equal((w.agent.sent.find((s) => s.method === 'agent/run')?.params as RunParams).engine, 'fake');
    assert.equal(w.choices.get(w.agent.key).engine, undefined);
  });

  it('follows up an ended task in its session', async () => {
    const w = world();
    ended(w, 't1', 'Add a flag');
    w.agent.answers.set('agent/run', (p: RunParams) => runResult(p, 'done'));
    w.person.will('And test it', undefined);
    await w.run('agentls.followUp', { kind: 'task', taskId: 't1' });
    const sent = w.agent.sent.find((s) => s.method === 'agent/run')?.params as RunParams;
    assert.deepEqual({ prompt: sent.prompt, sessionId: sent.sessionId }, { prompt: 'And test it', sessionId: 's1' });
  });
});

describe('steering a task', () => {
  it('says so when no task runs to stop', async () => {
    const w = world();
    await w.run('agentls.stop');
    assert.deepEqual(w.person.texts(), ['info: agentls: no task is running']);
    assert.deepEqual(w.agent.sent, []);
  });

  it('stops the one running task, and says when it had already ended', async () => {
    const w = world();
    w.tasks.begin('t1', 'Long work', { folder: w.agent.key });
    w.agent.answers.set('agent/stop', { stopped: false });
    await w.run('agentls.stop');
    assert.deepEqual(w.agent.sent, [{ method: 'agent/stop', params: { taskId: 't1' } }]);
    assert.deepEqual(w.person.texts(), ['info: agentls: that task had already ended']);
  });

  it('asks for a subtask\'s row to skip one', async () => {
    const w = world();
    await w.run('agentls.skipSubtask');
    assert.deepEqual(w.person.texts(), ['info: agentls: pick a subtask in the Tasks view to skip']);
  });

  it('undoes the rest when some files cannot be, once the person says so', async () => {
    const w = world();
    ended(w, 't1', 'Rename things');
    w.agent.answers.set('agent/undo', (p: UndoParams) => p.partial === true
      ? { taskId: 't1', sessionId: 's1', undone: true, files: [{ path: 'b.go', operation: 'update', undone: true }] }
      : {
        taskId: 't1', sessionId: 's1', undone: false, files: [
          { path: 'a.go', undone: false, reason: 'a.go changed since the task wrote it' },
          { path: 'b.go', undone: false, reason: 'b.go was left as it was: the undo was not partial' },
        ],
      });
    w.person.will('Undo', 'Undo the Rest');
    await w.run('agentls.undoTask', { kind: 'task', taskId: 't1' });
    assert.deepEqual(w.agent.sent.map((s) => s.params), [
      { taskId: 't1', sessionId: 's1' },
      { taskId: 't1', sessionId: 's1', partial: true },
    ]);
    assert.deepEqual(w.person.texts().slice(1), [
      'warning: agentls: 1 file cannot be undone, so nothing was. Undo the other 1 (b.go)?',
      'info: agentls: undid b.go',
    ]);
  });

  it('undoes nothing the person did not confirm', async () => {
    const w = world();
    ended(w, 't1', 'Rename things');
    w.person.will(undefined);
    await w.run('agentls.undoSubtask', { kind: 'subtask', taskId: 't1', subtaskId: '1' });
    assert.match(w.person.texts()[0] ?? '', /^warning: Undo subtask 1 of "Rename things"\?/);
    assert.deepEqual(w.agent.sent, []);
  });
});

describe('choosing what the next tasks run with', () => {
  it('names a scripted model by its file', () => {
    assert.equal(modelName('script:/home/me/demo.json'), 'script:demo.json');
    assert.equal(modelName('anthropic:claude-sonnet-4-5'), 'anthropic:claude-sonnet-4-5');
  });

  it('keeps the engine picked for the folder, and forgets it for the plan\'s choice', async () => {
    const w = world();
    w.agent.answers.set('agent/engines', { engines: [{ name: 'fake', builtin: false, command: ['fake-acp'], isolated: false, usable: true }] });
    w.person.will('fake');
    await w.run('agentls.selectEngine');
    assert.equal(w.choices.get(w.agent.key).engine, 'fake');
    assert.equal(w.wired.conversation.state().engine, 'fake');
    w.person.will('As planned');
    await w.run('agentls.selectEngine');
    assert.equal(w.choices.get(w.agent.key).engine, undefined);
  });

  it('lets no engine be chosen that cannot be used, and says why', async () => {
    const w = world();
    w.agent.answers.set('agent/engines', { engines: [{ name: 'codex', builtin: true, command: [], isolated: true, usable: false, reason: 'codex-acp is not installed' }] });
    w.person.will('$(circle-slash) codex', undefined);
    await w.run('agentls.selectEngine');
    assert.deepEqual(w.person.texts(), ['warning: agentls: codex cannot be used: codex-acp is not installed']);
    assert.equal(w.choices.get(w.agent.key).engine, undefined);
  });

  it('names the model of the next tasks in the conversation: the chosen one, else the setting\'s', async () => {
    const w = world();
    assert.equal(w.wired.conversation.state().model, 'configured');
    w.agent.settings.model = 'script:/home/me/demo.json';
    assert.equal(w.wired.conversation.state().model, 'script:demo.json');
    await w.choices.set(w.agent.key, { model: 'openai:gpt-4.1-mini' });
    assert.equal(w.wired.conversation.state().model, 'openai:gpt-4.1-mini');
  });

  it('chooses a model the test of the connection names as closest', async () => {
    const w = world();
    w.agent.answers.set('agent/checkModel', { model: 'openai:gpt-4.1-mni', ok: false, problem: 'unknownModel', message: 'openai does not offer gpt-4.1-mni', closest: ['openai:gpt-4.1-mini'] });
    w.person.will('Use openai:gpt-4.1-mini');
    await w.run('agentls.checkModel');
    await until('the closest model is chosen', () => w.choices.get(w.agent.key).model === 'openai:gpt-4.1-mini');
  });
});

describe('the conversation', () => {
  it('sends a prompt as a subtask of its running task', async () => {
    const w = world();
    w.tasks.begin('t1', 'Long work', { folder: w.agent.key });
    w.conversation.show('t1', w.agent.key, false);
    w.agent.answers.set('agent/addSubtask', { subtaskId: '3' });
    await w.wired.conversation.onViewMessage({ type: 'send', text: '  Also update the docs ' });
    assert.deepEqual(w.agent.sent, [{ method: 'agent/addSubtask', params: { taskId: 't1', content: 'Also update the docs' } }]);
    assert.deepEqual(w.state.get('agentls.history'), ['Also update the docs']);
  });

  it('sends what is attached with the next task, to an agentls that takes attachments', async () => {
    const w = world();
    w.conversation.folder = w.agent.key;
    w.conversation.attach({ path: 'main.go', startLine: 3, endLine: 4 });
    w.agent.answers.set('agent/run', (p: RunParams) => runResult(p, 'done'));
    w.person.will(undefined);
    await w.wired.conversation.onViewMessage({ type: 'send', text: 'Explain this' });
    const sent = w.agent.sent[0]?.params as RunParams;
    assert.deepEqual(sent.attachments, [{ type: 'file', path: 'main.go', range: { start: { line: 2, character: 0 }, end: { line: 4, character: 0 } } }]);
    assert.deepEqual(w.conversation.attachments, []);
  });

  it('sends no attachment to an agentls that does not take them', async () => {
    const w = world();
    w.agent.attachments = false;
    w.conversation.folder = w.agent.key;
    w.conversation.attach({ path: 'main.go' });
    w.agent.answers.set('agent/run', (p: RunParams) => runResult(p, 'done'));
    w.person.will(undefined);
    await w.wired.conversation.onViewMessage({ type: 'send', text: 'Explain this' });
    assert.equal((w.agent.sent[0]?.params as RunParams).attachments, undefined);
  });

  it('refuses a pasted image of a type agentls does not take', async () => {
    const w = world();
    await w.wired.conversation.onViewMessage({ type: 'paste', data: 'AAAA', mimeType: 'image/bmp' });
    assert.deepEqual(w.person.texts(), ['warning: agentls: a pasted image/bmp cannot go along: agentls takes png, jpeg, gif and webp images']);
    assert.deepEqual(w.conversation.attachments, []);
  });

  it('starts anew in the folder picked, the keyboard in the prompt box', async () => {
    const other = new FakeAgent('other', 1);
    const w = world(new FakeAgent('project'), other);
    w.conversation.show('t1', w.agent.key, false);
    w.person.will('other');
    await w.run('agentls.newConversation');
    assert.deepEqual({ folder: w.conversation.folder, tasks: w.conversation.taskIds }, { folder: other.key, tasks: [] });
    assert.equal(w.view.focuses, 1);
  });
});

describe('the agentls processes', () => {
  const change = (...sections: string[]) => ({ affectsConfiguration: (s: string) => sections.includes(s) });

  it('restarts an idle folder\'s agentls for a setting read at start, and asks first where a task runs', async () => {
    const busy = new FakeAgent('busy', 1);
    const w = world(new FakeAgent('idle'), busy);
    w.tasks.begin('t1', 'Long work', { folder: busy.key });
    w.person.will('Restart Now');
    stub.configurationChanged.fire(change('agentls.path'));
    await until('both restart', () => w.agent.restarts === 1 && busy.restarts === 1);
    assert.deepEqual(w.person.shown.map((s) => s.text), ['agentls: the change takes effect when agentls (busy) restarts']);
  });

  it('sends a setting a running agentls takes, without a restart', () => {
    const w = world();
    stub.configurationChanged.fire(change('agentls.model'));
    assert.equal(w.agent.reconfigures, 1);
    assert.equal(w.agent.restarts, 0);
  });

  it('restarts the idle agentls when a provider key changes', async () => {
    const w = world();
    w.keysChanged.fire();
    await until('the restart', () => w.agent.restarts === 1);
  });

  it('tells why agentls did not start, and shows its output when asked', async () => {
    const w = world();
    w.agent.startError = new Error('agentls did not start: spawn agentls ENOENT');
    w.person.will('Show Output');
    await w.run('agentls.showSessions');
    assert.deepEqual(w.person.shown, [{ kind: 'error', text: 'agentls: agentls did not start: spawn agentls ENOENT', actions: ['Open Settings', 'Show Output'] }]);
    assert.equal(w.output.shown, 1);
  });

  it('asks for a folder when none is open', async () => {
    const w = world();
    assert.equal(await new Requests(fakeAgents(), { show: () => undefined }).pick('Run Task'), undefined);
    assert.deepEqual(w.person.texts(), ['info: agentls: open a folder first: agentls works on a workspace folder']);
  });
});

describe('provider keys', () => {
  it('stores the key typed for the provider picked', async () => {
    const w = world();
    w.person.will('Anthropic', ' sk-ant-test ');
    await w.run('agentls.setProviderKey');
    assert.equal(w.keys.get('ANTHROPIC_API_KEY'), ' sk-ant-test ');
    assert.deepEqual(w.person.texts(), ['info: agentls: ANTHROPIC_API_KEY stored']);
  });

  it('says so when no key is stored to clear', async () => {
    const w = world();
    await w.run('agentls.clearProviderKey');
    assert.deepEqual(w.person.texts(), ['info: agentls: no provider key is stored']);
  });
});

describe('the Tasks view', () => {
  it('badges what waits, else what runs, and tells the menus whether a task runs', () => {
    const w = world();
    const view = stub.window.treeViews.find((v) => v.id === 'agentls.tasks');
    assert.ok(view !== undefined);
    w.tasks.begin('t1', 'Long work', { folder: w.agent.key });
    assert.deepEqual(view.badge, { value: 1, tooltip: '1 running' });
    assert.ok(stub.commands.executed.some(([id, key, value]) => id === 'setContext' && key === 'agentls.taskRunning' && value === true));
    approval(w, ['Run', 'Always allow', 'Deny'], []);
    assert.deepEqual(view.badge, { value: 1, tooltip: '1 waiting for you' });
    assert.equal(view.message, 'Waiting for you: Run go test ./...?');
  });
});
