// Workspace trust end to end (docs/SECURITY.md, "Workspace trust"): a
// code-server of its own, with workspace trust on (e2e.test.mjs turns it
// off), opens a folder the person has not trusted: VS Code's Restricted
// Mode. The agentls of the packaged .vsix runs there, asks before a command
// although the person's settings say commands: allow, and the folder's own
// .vscode/settings.json cannot name an engine; once the person trusts the
// folder from the status item's Manage Workspace Trust, the next command
// runs without a question.
//
// Environment: as e2e.test.mjs (E2E_DIR, VSIX, SHOTS).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { findFile, freePort, required, waitFor } from './lib.mjs';

const e2eDir = required('E2E_DIR');
const vsix = required('VSIX');
const shots = process.env.SHOTS ?? fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-vscode-shots-'));
const { chromium } = await import(path.join(e2eDir, 'node_modules/playwright-core/index.mjs'));
const codeServer = path.join(e2eDir, 'node_modules/.bin/code-server');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-vscode-trust-'));
const ws = path.join(tmp, 'workspace');
const userData = path.join(tmp, 'user-data');
const extensions = path.join(tmp, 'extensions');
let server; // the code-server process, leader of its own process group
let serverLog = '';
let browser;
let page;

// Two tasks, each running one command.
const script = {
  agents: {
    coordinator: [{ toolCalls: [{ name: 'plan', arguments: { subtasks: [{ id: '1', content: 'Run the first check' }] } }] }],
    1: [
      { toolCalls: [{ name: 'run_command', arguments: { command: 'echo first > first.txt' } }] },
      { toolCalls: [{ name: 'finish', arguments: { summary: 'first check ran' } }] },
    ],
    '2:coordinator': [{ toolCalls: [{ name: 'plan', arguments: { subtasks: [{ id: '1', content: 'Run the second check' }] } }] }],
    '2:1': [
      { toolCalls: [{ name: 'run_command', arguments: { command: 'echo second > second.txt' } }] },
      { toolCalls: [{ name: 'finish', arguments: { summary: 'second check ran' } }] },
    ],
  },
};

async function shot(name) {
  if (page) {
    await page.screenshot({ path: path.join(shots, `trust-${name}.png`) }).catch(() => undefined);
  }
}

/** step is an it that leaves a screenshot of the page when it fails. */
function step(name, fn) {
  it(name, async () => {
    try {
      await fn();
    } catch (e) {
      await shot(`failed-${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`);
      throw e;
    }
  });
}

/** palette runs a command by its title from the command palette. */
async function palette(title) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill(`>${title}`);
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
  await row.waitFor({ state: 'visible' });
  await input.press('Enter');
}

/** runTask starts a task from the palette. */
async function runTask(prompt) {
  await palette('agentls: Run Task…');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill(prompt);
  await input.press('Enter');
}

/** agentlsLog is the agentls output channel's log so far. */
function agentlsLog() {
  const f = findFile(path.join(userData, 'logs'), (p) => p.endsWith('agentls.log'));
  return f ? fs.readFileSync(f, 'utf8') : '';
}

/** sent is the last settings line the extension sent agentls, as JSON, once one matches want. */
async function sent(what, want) {
  return waitFor(what, () => {
    const lines = agentlsLog().split('\n').filter((l) => l.includes('settings sent to agentls for the next task: '));
    const last = lines.at(-1);
    if (last === undefined) {
      return undefined;
    }
    const options = JSON.parse(last.slice(last.indexOf('{')));
    return want(options) ? options : undefined;
  });
}

/** The agentls status bar item. */
function statusItem() {
  return page.locator('.statusbar-item', { hasText: 'agentls' }).first();
}

describe('agentls in a workspace VS Code does not trust', { timeout: 240000 }, () => {
  before(async () => {
    fs.mkdirSync(ws);
    fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
    fs.writeFileSync(path.join(tmp, 'task.script.json'), JSON.stringify(script));
    fs.writeFileSync(path.join(ws, 'notes.txt'), 'notes\n');
    // The person's own settings: commands run without asking.
    fs.writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify({
      'workbench.startupEditor': 'none',
      'workbench.tips.enabled': false,
      // Trust on, and no question at startup: the folder opens in Restricted Mode.
      'security.workspace.trust.enabled': true,
      'security.workspace.trust.startupPrompt': 'never',
      'telemetry.telemetryLevel': 'off',
      'extensions.autoCheckUpdates': false,
      'agentls.model': `script:${path.join(tmp, 'task.script.json')}`,
      'agentls.commands': 'allow',
    }, null, 2));

    const env = { ...process.env, AGENTLS_STATE_DIR: path.join(tmp, 'state'), XDG_CONFIG_HOME: path.join(tmp, 'config') };
    const common = ['--config', path.join(tmp, 'code-server.yaml'), '--user-data-dir', userData, '--extensions-dir', extensions];
    const install = spawnSync(codeServer, [...common, '--install-extension', vsix], { env, encoding: 'utf8', timeout: 120000 });
    assert.equal(install.status, 0, `--install-extension failed: ${install.stdout}${install.stderr}`);

    const port = await freePort();
    // Not --disable-workspace-trust: that is the point. detached: code-server
    // leads its own process group, killed whole at the end.
    server = spawn(codeServer, [
      ...common, '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none',
      '--disable-telemetry', '--disable-update-check', '--disable-getting-started-override', ws,
    ], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout.on('data', (b) => { serverLog += b; });
    server.stderr.on('data', (b) => { serverLog += b; });
    await waitFor('code-server to listen', () => serverLog.includes('HTTP server listening'), 60000);

    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
    });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
    await page.locator('.monaco-workbench').waitFor({ timeout: 60000 });
  });

  after(async () => {
    await shot('last');
    await browser?.close().catch(() => undefined);
    if (server?.pid !== undefined) {
      try {
        process.kill(-server.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    if (process.env.KEEP === undefined) {
      fs.rmSync(tmp, { recursive: true, force: true });
    } else {
      console.log(`kept ${tmp}`);
    }
  });

  step('opens the folder in Restricted Mode, where agentls starts and its status item says the workspace is not trusted', async () => {
    await page.locator('.statusbar-item', { hasText: 'Restricted Mode' }).first().waitFor({ timeout: 60000 });
    await statusItem().locator('.codicon-workspace-untrusted').waitFor({ timeout: 60000 });
    await waitFor('agentls to start untrusted', () => agentlsLog().includes('the workspace is not trusted (Restricted Mode)'), 60000);
    await shot('1-restricted');
  });

  step('keeps the folder\'s own settings of what runs out, and asks before a command under commands: allow, saying why', async () => {
    // The repository's settings: one it may set, and an engine it may not.
    fs.mkdirSync(path.join(ws, '.vscode'));
    fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'), JSON.stringify({
      'agentls.maxWorkers': 2,
      'agentls.engines': { planted: { command: ['/bin/true'] } },
      'agentls.commandEnv': { pass: ['GITHUB_TOKEN'] },
    }));
    const options = await sent('the folder\'s maxWorkers to reach agentls', (o) => o.maxWorkers === 2);
    assert.equal(options.workspaceTrust, 'untrusted');
    assert.equal(options.commands, 'allow', 'the person\'s own setting');
    assert.deepEqual(options.engines, {}, 'VS Code keeps the folder\'s engines out in Restricted Mode');
    assert.deepEqual(options.commandEnv, { pass: [] }, 'and the secrets it would pass to commands');

    await runTask('Run the first check');
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'echo first' });
    await toast.waitFor({ timeout: 60000 });
    await shot('2-asked');
    assert.match(await toast.innerText(), /This workspace is not trusted\. agentls wants to run echo first > first\.txt/);
    assert.equal(fs.existsSync(path.join(ws, 'first.txt')), false, 'nothing runs before the yes');
    await toast.getByRole('button', { name: 'Run', exact: true }).click();
    await page.locator('.notifications-toasts .notification-toast', { hasText: 'agentls: task done: first check ran' }).waitFor({ timeout: 60000 });
    assert.equal(fs.readFileSync(path.join(ws, 'first.txt'), 'utf8'), 'first\n');
    await palette('Notifications: Clear All Notifications');
  });

  step('trusts the folder from the status item\'s Manage Workspace Trust; the next command runs without a question', async () => {
    await statusItem().hover();
    const link = page.locator('.monaco-hover a, .workbench-hover a', { hasText: 'Manage Workspace Trust' }).first();
    await link.waitFor({ timeout: 15000 });
    await shot('3-tooltip');
    await link.click();
    // VS Code's Workspace Trust editor: "Trust" the folder.
    await page.locator('.tab.active', { hasText: 'Workspace Trust' }).waitFor({ timeout: 15000 });
    await page.keyboard.press('Escape');
    const trust = page.locator('.monaco-button', { hasText: /^Trust$/ }).first();
    await trust.waitFor({ timeout: 15000 });
    await shot('4-trust-editor');
    await trust.click();

    // The grant, and the folder's settings VS Code now reads, reach agentls.
    const options = await sent('the grant to reach agentls', (o) => o.workspaceTrust === 'trusted' && o.engines?.planted !== undefined);
    assert.deepEqual(options.commandEnv, { pass: ['GITHUB_TOKEN'] });
    await waitFor('the status item without the mark', async () => await statusItem().locator('.codicon-workspace-untrusted').count() === 0);

    // commands: allow holds again: the task ends with nobody answering.
    await runTask('Run the second check');
    await page.locator('.notifications-toasts .notification-toast', { hasText: 'agentls: task done: second check ran' }).waitFor({ timeout: 60000 });
    assert.equal(fs.readFileSync(path.join(ws, 'second.txt'), 'utf8'), 'second\n');
    assert.equal(await page.locator('.notifications-toasts .notification-toast', { hasText: 'agentls wants to run' }).count(), 0, 'no question was asked');
    await shot('5-trusted');
  });
});
