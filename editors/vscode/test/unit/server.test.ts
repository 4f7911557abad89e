// The extension's side of the protocol against the real agentls binary:
// the initializationOptions and capabilities it sends, the requests its
// commands make, and its reverse-call handlers and view models wired onto the
// connection, through a scripted task. The binary is AGENTLS_BIN, else one
// built from this checkout with go build.
import assert from 'node:assert/strict';
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as vscode from 'vscode';
import { createMessageConnection, MessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { initOptions } from '../../src/config';
import { undoRefusals } from '../../src/choices';
import { EditLog } from '../../src/edits';
import { CommandRunner } from '../../src/handlers/runCommand';
import { PendingStore } from '../../src/pending';
import {
  advertised,
  CodeGraphResult,
  Features,
  fillAgentCapabilities,
  HeatSnapshot,
  Methods,
  RunResult,
  SessionResult,
  SessionsResult,
  TaskUpdateParams,
  TraceResult,
  UndoResult,
} from '../../src/protocol';
import { HeatDecorations, HeatStore } from '../../src/views/heat';
import { transcript } from '../../src/views/sessions';
import { changeCounts, TaskStore } from '../../src/views/taskModel';
import { Connection, register } from '../../src/wiring';
import { FakeEditor, until } from './fakes';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-vscode-server-'));
const ws = path.join(tmp, 'workspace');

function binary(): string {
  const env = process.env.AGENTLS_BIN;
  if (env !== undefined && env !== '') {
    return env;
  }
  const repo = path.resolve(__dirname, '../../../../..');
  const out = path.join(tmp, 'agentls');
  const r = spawnSync('go', ['build', '-o', out, './cmd/agentls'], { cwd: repo, encoding: 'utf8' });
  assert.equal(r.status, 0, `go build failed: ${r.stderr}`);
  return out;
}

const goFiles: Record<string, string> = {
  'go.mod': 'module example.com/w\n\ngo 1.21\n',
  'one/reader.go': 'package one\n\ntype Reader struct{}\n\nfunc New() *Reader { return &Reader{} }\n\nfunc (*Reader) Read() {}\n',
  'two/reader.go': 'package two\n\ntype Reader struct{}\n\nfunc (Reader) Read() {}\n',
  'use/use.go': 'package use\n\nimport (\n\t"example.com/w/one"\n\t"example.com/w/two"\n)\n\nfunc Use() {\n\tone.New().Read()\n\t_ = two.Reader{}\n}\n',
};

/** The places a Go language server would give for one's Read: its declaration and Use's call. */
const oneRead = [
  { file: 'one/reader.go', line: 6, from: 15, to: 19 },
  { file: 'use/use.go', line: 8, from: 11, to: 15 },
];

const script = {
  agents: {
    coordinator: [{ toolCalls: [{ name: 'plan', arguments: { subtasks: [{ id: '1', content: 'Finish the notes' }] } }] }],
    '1': [
      { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }], usage: { inputTokens: 100, outputTokens: 10 } },
      { toolCalls: [{ name: 'ask_human', arguments: { question: 'Which word?', options: ['final', 'done'] } }] },
      { toolCalls: [{ name: 'edit_file', arguments: { path: 'notes.txt', old_string: 'draft from the editor', new_string: 'final from the agent' } }] },
      { toolCalls: [{ name: 'run_command', arguments: { command: 'cat notes.txt; echo via-runCommand' } }] },
      { toolCalls: [{ name: 'finish', arguments: { summary: 'notes finished' } }], usage: { inputTokens: 50, outputTokens: 5 } },
    ],
    '2:coordinator': [{ toolCalls: [{ name: 'plan', arguments: { subtasks: [{ id: '1', content: 'Polish and add' }] } }] }],
    '2:1': [
      { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] },
      { toolCalls: [{ name: 'edit_file', arguments: { path: 'notes.txt', old_string: 'final from the agent', new_string: 'polished by the agent' } }] },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'extra.txt', content: 'extra\n' } }] },
      { toolCalls: [{ name: 'run_command', arguments: { command: 'echo approved' } }] },
      { toolCalls: [{ name: 'finish', arguments: { summary: 'polished' } }] },
    ],
  },
};

/**
 * settings sends new settings and waits until agentls has taken them: a run
 * may start before a notification sent ahead of it is handled, but
 * notifications are handled in order, so the message refusing a bad value
 * sent next says the settings before it are in place (and stay).
 */
async function settings(conn: MessageConnection, options: unknown): Promise<void> {
  const refused = new Promise<void>((resolve) => {
    const sub = conn.onNotification('window/showMessage', () => {
      sub.dispose();
      resolve();
    });
  });
  await conn.sendNotification(Methods.didChangeConfiguration, { settings: { agentls: options } });
  await conn.sendNotification(Methods.didChangeConfiguration, { settings: { agentls: { maxWorkers: 0 } } });
  await refused;
}

describe('the extension against the agentls binary', { timeout: 120000 }, () => {
  let proc: ChildProcess;
  let conn: MessageConnection;
  let exited: Promise<number | null>;
  const tasks = new TaskStore();
  const pending = new PendingStore();
  const edits = new EditLog();
  tasks.diffOf = (folder, p) => edits.latest(folder, p)?.id;
  const heat = new HeatDecorations(new HeatStore(), () => vscode.Uri.file(ws));
  let heardNotes: () => void = () => undefined;
  const notesHeat = new Promise<void>((resolve) => {
    heardNotes = resolve;
  });
  const updates: TaskUpdateParams[] = [];
  const reverse: string[] = [];
  const commandOutput: string[] = [];
  const notified: string[] = [];
  const editor = new FakeEditor(ws);
  const located: string[] = [];
  const folder = vscode.Uri.file(ws).toString();

  before(() => {
    const bin = binary();
    fs.mkdirSync(path.join(ws, '.orchestration'), { recursive: true });
    fs.writeFileSync(path.join(ws, 'notes.txt'), 'draft on disk\n');
    // Go where a guess by name would be wrong: one's Read and two's, called
    // on a value whose type the graph cannot see.
    for (const [name, text] of Object.entries(goFiles)) {
      fs.mkdirSync(path.dirname(path.join(ws, name)), { recursive: true });
      fs.writeFileSync(path.join(ws, name), text);
    }
    fs.writeFileSync(path.join(tmp, 'script.json'), JSON.stringify(script));
    // notes.txt is open in the editor with unsaved text the disk lacks.
    editor.disk.set(editor.uri('notes.txt'), 'draft on disk\n');
    editor.open('notes.txt', 'draft from the editor\n', true);
    proc = spawn(bin, ['serve', '--log-level', 'warn'], {
      cwd: ws,
      env: { ...process.env, AGENTLS_STATE_DIR: path.join(tmp, 'state') },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    exited = new Promise((resolve) => proc.on('exit', (code) => {
      resolve(code);
    }));
    if (proc.stdout === null || proc.stdin === null) {
      throw new Error('no pipes to agentls');
    }
    conn = createMessageConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin));
    const wiring: Connection = {
      onRequest: (method, handler) => conn.onRequest(method, (params: unknown, token: vscode.CancellationToken) => {
        reverse.push(method);
        return handler(params, token);
      }),
      onNotification: (method, handler) => conn.onNotification(method, (params: unknown) => {
        if (method === Methods.taskUpdate) {
          updates.push(params as TaskUpdateParams);
        }
        handler(params);
      }),
      sendNotification: (method, params) => {
        void conn.sendNotification(method, params);
      },
    };
    register(wiring, {
      folder: { key: folder, name: 'workspace', fsPath: ws },
      pending,
      tasks,
      folders: () => [{ path: ws, name: 'workspace' }],
      readFile: {
        textDocuments: () => [...editor.docs.entries()].map(([uri, d]) => ({ uri: vscode.Uri.parse(uri), getText: () => d.text } as unknown as vscode.TextDocument)),
        readFile: (uri) => Promise.resolve(fs.readFileSync(uri.fsPath)),
        root: () => vscode.Uri.file(ws),
      },
      // A provider of VS Code's for one/reader.go alone, as a Go extension
      // serving only it would be.
      locate: {
        references: (uri, line, character) => {
          located.push(`${path.relative(ws, uri.fsPath)} ${line}:${character}`);
          return Promise.resolve(path.relative(ws, uri.fsPath) === 'one/reader.go' && line === 6
            ? oneRead.map((p) => ({ uri: vscode.Uri.file(path.join(ws, p.file)), range: { start: { line: p.line, character: p.from }, end: { line: p.line, character: p.to } } }))
            : []);
        },
        definitions: () => Promise.resolve([]),
        parseUri: (u) => vscode.Uri.parse(u, true),
      },
      // No language server checks the workspace's files.
      diagnostics: {
        of: () => [],
        all: () => [],
        inside: (uri) => uri.fsPath.startsWith(ws + path.sep),
        parseUri: (u) => vscode.Uri.parse(u, true),
        onDidChange: () => ({ dispose: () => undefined }),
      },
      ask: {
        showQuickPick: (items) => Promise.resolve(items[0]),
        showInputBox: () => Promise.resolve(undefined),
      },
      // The notification of an approval is closed unanswered: it must wait.
      approve: {
        notify: (_type, message) => {
          notified.push(message);
          return Promise.resolve(undefined);
        },
      },
      applyEdit: editor.deps({ pending, edits, tasks, folder }),
      runner: new CommandRunner({ append: (t) => commandOutput.push(t), show: () => undefined }),
      heat,
      warn: (m) => {
        throw new Error(m);
      },
    });
    heat.onDidChangeFileDecorations((uris) => {
      if (uris.some((u) => path.relative(ws, u.fsPath) === 'notes.txt')) {
        heardNotes();
      }
    });
    conn.listen();
  });

  after(async () => {
    conn.dispose();
    proc.kill('SIGKILL');
    await exited;
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('accepts the settings as initializationOptions and the experimental.agent capability', async () => {
    const values: Record<string, unknown> = {
      model: `script:${path.join(tmp, 'script.json')}`,
      editMode: 'apply',
      commands: 'allow',
      zones: { allow: ['**'], deny: ['**/.git/**', 'secret/**'] },
      commandTimeoutMs: 30000,
    };
    const { options, problems } = initOptions({ get: (k) => values[k] }, true);
    assert.deepEqual(problems, []);
    // VS Code's language client advertises these; the extension's applyEdit
    // handler answers the edits, over a stand-in for VS Code's documents.
    const capabilities: { experimental?: unknown; window?: unknown; workspace?: unknown } = {
      window: { showMessage: {} },
      workspace: { applyEdit: true, workspaceEdit: { documentChanges: true, resourceOperations: ['create', 'delete'], changeAnnotationSupport: {} } },
    };
    fillAgentCapabilities(capabilities);
    const res = await conn.sendRequest<{ serverInfo: { name: string }; capabilities: { experimental: { agent: { version: number } } } }>(
      'initialize',
      { processId: process.pid, rootUri: vscode.Uri.file(ws).toString(), capabilities, initializationOptions: options },
    );
    assert.equal(res.serverInfo.name, 'agentls');
    assert.equal(res.capabilities.experimental.agent.version, 1);
    assert.equal(advertised(res, Features.attachments), true, 'agentls declares that agent/run takes attachments');
    await conn.sendNotification('initialized', {});
  });

  it('answers ping, an empty session list and an empty heat snapshot', async () => {
    assert.deepEqual(await conn.sendRequest(Methods.ping, { data: { n: 1 } }), { data: { n: 1 } });
    const sessions = await conn.sendRequest<SessionsResult>(Methods.sessions, {});
    assert.deepEqual(sessions.sessions ?? [], []);
    const snap = await conn.sendRequest<HeatSnapshot>(Methods.heatSnapshot, {});
    heat.applySnapshot(snap);
    assert.deepEqual(snap.nodes ?? [], []);
  });

  it('takes a settings change for the next task', async () => {
    const values: Record<string, unknown> = { model: `script:${path.join(tmp, 'script.json')}`, editMode: 'apply', commands: 'allow', maxWorkers: 2 };
    const { options } = initOptions({ get: (k) => values[k] }, true);
    await settings(conn, options);
    assert.deepEqual(await conn.sendRequest(Methods.ping, {}), { data: null });
  });

  it('runs a scripted task whose reads, question and command the extension answers', async () => {
    tasks.begin('task-1', 'Finish the notes');
    const res = await conn.sendRequest<RunResult>(Methods.run, { prompt: 'Finish the notes', taskId: 'task-1' });
    assert.equal(res.state, 'done', res.summary);
    assert.equal(res.taskId, 'task-1');
    tasks.finish(res);

    assert.ok(reverse.includes(Methods.readFile), 'the file was read through the editor');
    assert.ok(reverse.includes(Methods.ask), 'the question went to the editor');
    assert.ok(reverse.includes(Methods.runCommand), 'the command ran in the editor');
    // The edit matched the unsaved text only the editor had, and came back
    // to the editor as a workspace edit of the open document, left unsaved
    // as the person's text was.
    assert.ok(reverse.includes(Methods.applyEdit));
    assert.equal(editor.applied.length, 1);
    assert.equal(editor.text('notes.txt'), 'final from the agent\n');
    assert.equal(editor.disk.get(editor.uri('notes.txt')), 'draft on disk\n', 'the person\'s unsaved text is not saved for them');
    assert.equal(fs.readFileSync(path.join(ws, 'notes.txt'), 'utf8'), 'draft on disk\n', 'the disk is the editor\'s to write');
    assert.match(commandOutput.join(''), /draft on disk\nvia-runCommand\n\[exit 0\]/);
    const answered = updates.find((u) => u.event.kind === 'answered');
    assert.equal(answered?.event.answer, 'final', 'the quick pick answer reached the agent');

    const t = tasks.get('task-1');
    assert.equal(t?.state, 'done');
    assert.deepEqual(t.subtasks.map((s) => [s.id, s.state]), [['1', 'done']]);
    assert.deepEqual(t.changes.map((c) => [c.path, c.operation, c.applied]), [['notes.txt', 'update', true]]);
    assert.equal(changeCounts(t), '1 applied');
    const change = t.transcript.get('1')?.find((e) => e.kind === 'change');
    assert.ok(change?.kind === 'change' && change.diffId !== undefined, 'the change links to its diff');
    assert.equal(edits.get(change.diffId)?.before, 'draft from the editor\n');
    assert.equal(edits.get(change.diffId)?.after, 'final from the agent\n');
    assert.equal(t.inputTokens, res.usage.inputTokens);
    const seqs = updates.filter((u) => u.taskId === 'task-1').map((u) => u.seq);
    assert.deepEqual(seqs, seqs.map((_, i) => i + 1), 'every update was applied in order');
    // Heat is sent on the server's next tick, after the result or before it.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      notesHeat,
      new Promise((_, reject) => {
        timer = setTimeout(() => {
          reject(new Error('no agent/heatUpdate for notes.txt within 10 s'));
        }, 10000);
      }),
    ]).finally(() => {
      clearTimeout(timer);
    });
    assert.ok(heat.store.get('notes.txt') !== undefined, 'notes.txt has heat');
  });

  it('finds the session and the trace of the change', async () => {
    const sessions = await conn.sendRequest<SessionsResult>(Methods.sessions, {});
    const list = sessions.sessions ?? [];
    assert.equal(list.length, 1);
    const s = await conn.sendRequest<SessionResult>(Methods.session, { sessionId: list[0]?.sessionId });
    assert.match(transcript(s), /Finish the notes/);
    const trace = await conn.sendRequest<TraceResult>(Methods.trace, { path: 'notes.txt', line: 1 });
    const entries = trace.entries ?? [];
    assert.equal(entries.length, 1);
    assert.equal(entries[0]?.taskId, 'task-1');
    assert.equal(entries[0]?.operation, 'update');
  });

  it('holds proposals and approvals until answered, and counts the changes applied and rejected', async () => {
    const values: Record<string, unknown> = { model: `script:${path.join(tmp, 'script.json')}`, editMode: 'propose', commands: 'ask' };
    const { options } = initOptions({ get: (k) => values[k] }, true);
    await settings(conn, options);
    tasks.begin('task-2', 'Polish the notes', { folder });
    const run = conn.sendRequest<RunResult>(Methods.run, { prompt: 'Polish the notes', taskId: 'task-2' });

    await until('the proposal of notes.txt', () => pending.all().some((p) => p.kind === 'proposal'), 20000);
    const first = pending.all()[0];
    assert.equal(first.kind, 'proposal');
    assert.equal(first.taskId, 'task-2', 'the proposal shows under its task');
    assert.deepEqual(first.files?.map((f) => [f.path, f.operation]), [['notes.txt', 'update']]);
    assert.equal(edits.get(first.files[0].diffId ?? '')?.after, 'polished by the agent\n', 'its diff shows the proposal');
    assert.equal(editor.text('notes.txt'), 'final from the agent\n', 'nothing lands before an answer');
    assert.equal(pending.answer(first.id, 'Accept'), 'answered');

    await until('the proposal of extra.txt', () => pending.all().some((p) => p.kind === 'proposal'), 20000);
    const second = pending.all()[0];
    assert.deepEqual(second.files?.map((f) => [f.path, f.operation]), [['extra.txt', 'create']]);
    pending.answer(second.id, 'Reject');

    await until('the approval of the command', () => pending.all().some((p) => p.kind === 'approval'), 20000);
    const approval = pending.all()[0];
    assert.equal(approval.text, 'agentls wants to run echo approved in workspace', 'no backticks, no absolute path');
    assert.equal(approval.taskId, 'task-2');
    assert.deepEqual(notified, ['agentls wants to run echo approved in workspace']);
    // The notification was closed: the approval still waits, and is answered from the views.
    assert.equal(pending.answer(approval.id, 'Run'), 'answered');

    const res = await run;
    assert.equal(res.state, 'done', res.summary);
    tasks.finish(res);
    assert.equal(res.applied, 1);
    assert.equal(res.rejected, 1);
    assert.equal(changeCounts(tasks.get('task-2') ?? { changes: [] }), '1 applied, 1 rejected');
    assert.equal(editor.text('notes.txt'), 'polished by the agent\n');
    assert.equal(editor.text('extra.txt'), undefined, 'the rejected file was not made');
    assert.match(commandOutput.join(''), /approved\n\[exit 0\]/);
  });

  it('undoes a task, and what is left of it with a partial undo when a file is refused', async () => {
    // The person changes the line the task wrote: that file is refused.
    editor.open('notes.txt', 'polished by the person\n', true);
    const refused = await conn.sendRequest<UndoResult>(Methods.undo, { taskId: 'task-2' });
    assert.equal(refused.undone, false);
    assert.deepEqual(undoRefusals(refused).refused.map((f) => f.path), ['notes.txt']);
    assert.match(undoRefusals(refused).refused[0]?.reason ?? '', /notes\.txt/);
    editor.open('notes.txt', 'polished by the agent\n', true);
    const undone = await conn.sendRequest<UndoResult>(Methods.undo, { taskId: 'task-2', partial: true });
    assert.equal(undone.undone, true, JSON.stringify(undone));
    assert.equal(editor.text('notes.txt'), 'final from the agent\n');
  });

  it('answers the code graph\'s questions with VS Code\'s providers, and where none serves the file the graph answers', async () => {
    const calls = async (symbol: string, file: string): Promise<Record<string, string | undefined>> => {
      const res = await conn.sendRequest<CodeGraphResult>(Methods.codeGraph, { symbol, path: file });
      const out: Record<string, string | undefined> = {};
      for (const e of res.edges ?? []) {
        if (e.kind === 'calls') {
          out[`${e.from} -> ${e.to}`] = e.provenance;
        }
      }
      return out;
    };
    // The provider says one.New().Read() is one's Read.
    assert.deepEqual(await calls('Read', 'one/reader.go'), { 'use/use.go#Use -> one/reader.go#Reader.Read': 'lsp' });
    assert.deepEqual(located, ['one/reader.go 6:15'], 'asked at the name of the definition');
    // No provider for two/reader.go: the graph's guess, said to be one.
    assert.deepEqual(await calls('Read', 'two/reader.go'), { 'use/use.go#Use -> two/reader.go#Reader.Read': 'name' });
    assert.deepEqual(located, ['one/reader.go 6:15', 'two/reader.go 4:14']);
  });

  it('shuts down cleanly', async () => {
    await conn.sendRequest('shutdown');
    await conn.sendNotification('exit');
    proc.stdin?.end();
    assert.equal(await exited, 0);
  });
});
