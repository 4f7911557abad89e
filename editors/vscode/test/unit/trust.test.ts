// Workspace trust (docs/SECURITY.md, "Workspace trust"): what the extension
// tells agentls of VS Code's trust, when it tells it again, what the status
// item says in Restricted Mode, and which settings a repository's own
// .vscode/settings.json cannot set there.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, it } from 'node:test';
import * as vscode from 'vscode';
import { allSettings, initOptions } from '../../src/config';
import * as lifecycle from '../../src/commands/lifecycle';
import { PendingStore } from '../../src/pending';
import { manageTrustCommand, TaskStatusBar, untrustedNote, withTrust } from '../../src/views/statusBar';
import { TaskStore } from '../../src/views/taskModel';
import { FakeAgent, fakeAgents } from './person';
import * as stub from './vscode-stub/vscode';

function source(values: Record<string, unknown>): { get(k: string): unknown } {
  return { get: (k) => values[k] };
}

afterEach(() => {
  stub.workspace.isTrusted = true;
  stub.window.statusBarItems.length = 0;
});

describe('workspaceTrust in the settings agentls is sent', () => {
  const values = { commands: 'allow', allowCommands: ['go test'], mcpServers: { docs: { command: 'docs-mcp' } } };

  it('is untrusted when VS Code does not trust the workspace, the settings otherwise the same', () => {
    const trusted = initOptions(source(values), true);
    const untrusted = initOptions(source(values), false);
    assert.equal(trusted.options.workspaceTrust, 'trusted');
    assert.equal(untrusted.options.workspaceTrust, 'untrusted');
    assert.deepEqual(untrusted.problems, []);
    assert.deepEqual({ ...untrusted.options, workspaceTrust: 'trusted' }, trusted.options,
      'the commands setting is sent as it is: agentls itself asks in an untrusted workspace');
  });

  it('is always sent, so that a reconfiguration after the grant reaches agentls', () => {
    assert.equal(initOptions(source({}), true).options.workspaceTrust, 'trusted');
  });
});

describe('the grant of trust', () => {
  const disposables: { dispose(): void }[] = [];
  afterEach(() => {
    for (const d of disposables.splice(0)) {
      d.dispose();
    }
  });

  it('reaches the agentls of every folder, running or starting', () => {
    const one = new FakeAgent('one');
    const two = new FakeAgent('two', 1);
    two.isRunning = false;
    stub.workspace.isTrusted = false;
    disposables.push(...lifecycle.register({
      agents: fakeAgents(one, two),
      tasks: new TaskStore(),
      output: { show: () => undefined },
      onDidChangeKeys: () => ({ dispose: () => undefined }),
    }));
    assert.deepEqual([one.reconfigures, two.reconfigures], [0, 0]);
    stub.workspace.isTrusted = true;
    stub.trustGranted.fire();
    // AgentClient.reconfigure reads isTrusted again, and waits for a start in progress.
    assert.deepEqual([one.reconfigures, two.reconfigures], [1, 1]);
    assert.deepEqual([one.restarts, two.restarts], [0, 0], 'nothing restarts: the running tasks go on');
  });
});

describe('the status item in Restricted Mode', () => {
  it('is unchanged in a trusted workspace', () => {
    const s = { text: '$(hubot) agentls', tooltip: 'agentls: no task yet.' };
    assert.deepEqual(withTrust(s, true), s);
  });

  it('says the workspace is not trusted and offers Manage Workspace Trust, the task\'s own words escaped', () => {
    const { text, tooltip } = withTrust({ text: '$(pass) agentls: done 2/2', tooltip: 'Fix *all* [links](command:x)\ndone' }, false);
    assert.equal(text, '$(pass) agentls: done 2/2 $(workspace-untrusted)');
    assert.ok(tooltip instanceof vscode.MarkdownString);
    // The note, as appendText escapes it.
    assert.ok(tooltip.value.includes(untrustedNote.replace(/[().]/g, '\\$&')), tooltip.value);
    assert.ok(tooltip.value.includes(`[Manage Workspace Trust](command:${manageTrustCommand})`));
    assert.ok(tooltip.value.includes('Fix \\*all\\* \\[links\\]\\(command:x\\)'), `a prompt makes no link: ${tooltip.value}`);
    assert.deepEqual(tooltip.isTrusted, { enabledCommands: [manageTrustCommand] }, 'the one command its links may run');
  });

  it('follows the grant', () => {
    stub.workspace.isTrusted = false;
    const bar = new TaskStatusBar(new TaskStore(), new PendingStore());
    const item = stub.window.statusBarItems.at(-1);
    assert.equal(item?.text, '$(hubot) agentls $(workspace-untrusted)');
    stub.workspace.isTrusted = true;
    stub.trustGranted.fire();
    assert.equal(item.text, '$(hubot) agentls');
    assert.equal(typeof item.tooltip, 'string');
    bar.dispose();
  });
});

describe('package.json in Restricted Mode', () => {
  // out/test/unit/trust.test.js → the extension's folder.
  const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../package.json'), 'utf8')) as {
    capabilities?: { untrustedWorkspaces?: { supported: unknown; description?: string; restrictedConfigurations?: string[] } };
    contributes: { configuration: { properties: Record<string, unknown> } };
  };
  const untrusted = manifest.capabilities?.untrustedWorkspaces;

  it('runs agentls in a workspace the person does not trust, which then asks before anything runs', () => {
    assert.equal(untrusted?.supported, 'limited');
    assert.match(untrusted.description ?? '', /asks before it runs any command/);
  });

  it('keeps the workspace\'s own settings from choosing what runs, what runs without asking, and where', () => {
    // Each of these, set by a repository, would run its code, widen what
    // runs without the person's yes, or hand it a secret.
    const restricted = [
      'agentls.path', // the program VS Code starts
      'agentls.model', // which model acts (a script: model is the repository's own tool calls)
      'agentls.editMode', // apply: edits land without review
      'agentls.commands', // allow: commands run without asking
      'agentls.allowCommands',
      'agentls.commandEnv', // the secrets commands inherit
      'agentls.zones', // what the agent may touch: .git/hooks
      'agentls.mcpServers', // programs to start, origins to send headers to
      'agentls.allowMcpTools',
      'agentls.engines', // programs to start, with the environment's secrets
      'agentls.diagnostics', // commands that run before and after each edit
    ];
    assert.deepEqual([...(untrusted?.restrictedConfigurations ?? [])].sort(), [...restricted].sort());
    for (const key of restricted) {
      assert.ok(key in manifest.contributes.configuration.properties, `${key} is a setting of the extension`);
    }
    // What is left changes no more than the cost, the time, or the log.
    const free = (allSettings as readonly string[]).filter((k) => !restricted.includes(k));
    assert.deepEqual(free.sort(), ['agentls.commandTimeoutMs', 'agentls.logLevel', 'agentls.maxWorkers', 'agentls.prices', 'agentls.thinking']);
  });
});
