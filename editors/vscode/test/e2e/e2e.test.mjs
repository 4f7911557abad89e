// The end-to-end test of the agentls extension in a real VS Code:
// code-server 4.100.3 (VS Code 1.100.3) with the packaged .vsix installed,
// driven through Debian's chromium by playwright-core. A scripted model
// (task.script.json) makes the task deterministic and offline.
//
// Environment: E2E_DIR (where test/setup.sh installed code-server and
// playwright-core), VSIX (the packaged extension), SHOTS (a directory for
// screenshots; each step leaves one, a failure leaves failure.png).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const e2eDir = required('E2E_DIR');
const vsix = required('VSIX');
const shots = process.env.SHOTS ?? fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-vscode-shots-'));
const { chromium } = await import(path.join(e2eDir, 'node_modules/playwright-core/index.mjs'));
const codeServer = path.join(e2eDir, 'node_modules/.bin/code-server');

function required(name) {
  const v = process.env[name];
  if (v === undefined || v === '') {
    throw new Error(`${name} is not set`);
  }
  return v;
}

/** A free loopback port. */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** waitFor polls check until it returns a truthy value or the deadline passes. */
async function waitFor(what, check, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const v = await check();
      if (v) {
        return v;
      }
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-vscode-e2e-'));
const ws = path.join(tmp, 'workspace');
const userData = path.join(tmp, 'user-data');
const extensions = path.join(tmp, 'extensions');
const state = path.join(tmp, 'state');
let server; // the code-server process, leader of its own process group
let serverLog = '';
let browser;
let page;

async function shot(name) {
  if (page) {
    await page.screenshot({ path: path.join(shots, `${name}.png`) }).catch(() => undefined);
  }
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

/** writeSettings writes the user settings, agentls ones over the test's own. */
function writeSettings(agentls) {
  fs.writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify({
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'security.workspace.trust.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false,
    'files.autoSave': 'off',
    'agentls.model': `script:${path.join(tmp, 'task.script.json')}`,
    'agentls.commands': 'ask',
    ...agentls,
  }, null, 2));
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

describe('agentls in VS Code', { timeout: 300000 }, () => {
  before(async () => {
    fs.mkdirSync(ws);
    fs.mkdirSync(path.join(ws, '.orchestration')); // turns the trace on
    fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
    fs.writeFileSync(path.join(ws, 'notes.txt'), 'draft on disk\n');
    const script = path.join(tmp, 'task.script.json');
    fs.copyFileSync(path.join(here, 'task.script.json'), script);
    writeSettings({ 'agentls.editMode': 'apply' });

    const env = { ...process.env, AGENTLS_STATE_DIR: state, XDG_CONFIG_HOME: path.join(tmp, 'config') };
    const common = ['--config', path.join(tmp, 'code-server.yaml'), '--user-data-dir', userData, '--extensions-dir', extensions];
    const install = spawnSync(codeServer, [...common, '--install-extension', vsix], { env, encoding: 'utf8', timeout: 120000 });
    assert.equal(install.status, 0, `--install-extension failed: ${install.stdout}${install.stderr}`);
    assert.match(install.stdout, /successfully installed/);

    const port = await freePort();
    // detached: code-server leads its own process group (setsid), so the
    // whole group, extension host and agentls included, is killed at the end.
    server = spawn(codeServer, [
      ...common, '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none',
      '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust',
      '--disable-getting-started-override', ws,
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

  step('starts agentls from the .vsix and shows its status bar item', async () => {
    await page.locator('.statusbar-item', { hasText: 'agentls' }).first().waitFor({ timeout: 60000 });
    const log = await waitFor('the agentls log', () => {
      const f = findFile(path.join(userData, 'logs'), (p) => p.endsWith('agentls.log'));
      const text = f ? fs.readFileSync(f, 'utf8') : '';
      return text.includes('initialized') ? text : undefined;
    }, 60000);
    // VS Code runs what the linux-x64 package installed: the bundle and
    // the binary, none of the development folder's build or modules.
    const installed = fs.readdirSync(extensions).filter((d) => d.startsWith('agentls.agentls-'));
    assert.deepEqual(installed, [`agentls.agentls-${JSON.parse(fs.readFileSync(path.join(here, '../../package.json'), 'utf8')).version}`]);
    const ext = path.join(extensions, installed[0]);
    assert.ok(fs.existsSync(path.join(ext, 'dist', 'extension.js')), 'the bundle is installed');
    for (const dev of ['out', 'src', 'node_modules', 'go.mod']) {
      assert.equal(fs.existsSync(path.join(ext, dev)), false, `${dev} is not in the package`);
    }
    const bin = path.join(ext, 'bin', 'linux-x64', 'agentls');
    assert.ok(log.includes(`starting ${bin} (packaged)`), `the binary inside the .vsix is used: ${log.split('\n').find((l) => l.includes('starting')) ?? log}`);
    assert.match(log, /"ReadFile":true,"RunCommand":true,"Ask":true/, 'experimental.agent is advertised');
    assert.match(log, /"ChangeAnnotation":true/);
    await shot('1-started');
  });

  step('starts a task from the palette that reads the unsaved editor and asks before running a command', async () => {
    // Open notes.txt and change it without saving: only the editor has this text.
    await openFile('notes.txt');
    const editor = page.locator('.monaco-editor textarea').first();
    await editor.focus();
    await page.keyboard.press('Control+A');
    await page.keyboard.type('draft from the editor\n');
    await page.locator('.tab.active.dirty', { hasText: 'notes.txt' }).waitFor();
    assert.equal(fs.readFileSync(path.join(ws, 'notes.txt'), 'utf8'), 'draft on disk\n', 'the change is unsaved');

    await palette('agentls: Run Task…');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill('Finish the notes and run the check');
    await input.press('Enter');

    // The command needs approval: a notification with Run / Always allow / Deny.
    await approval().waitFor({ timeout: 60000 });
    await shot('2-approval');
    assert.equal(fs.existsSync(path.join(ws, 'ran.txt')), false, 'nothing runs before the approval');
  });

  step('badges the files the agent touched with their heat in the explorer', async () => {
    await palette('View: Show Explorer');
    const row = page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'notes.txt' });
    await row.waitFor();
    // VS Code draws a decoration badge as the ::after content of a class on
    // the row's label, and puts the tooltip into its aria-label.
    const label = row.locator('.monaco-icon-label').first();
    const badge = () => label.evaluate((el) => {
      const c = [...el.classList].find((k) => k.startsWith('monaco-decoration-itemBadge'));
      return c ? getComputedStyle(el, '::after').content.replace(/^"|"$/g, '') : '';
    });
    const text = await waitFor('the heat badge of notes.txt', async () => {
      const b = await badge();
      return /^[1-9!]$/.test(b) ? b : undefined;
    }, 10000).catch(async (e) => {
      await shot('heat-missing');
      throw new Error(`${e.message}; the row is ${await row.first().innerHTML({ timeout: 1000 })}`);
    });
    // The second subtask read notes.txt and holds it in its context while it
    // waits for the approval: the file is at full heat.
    assert.equal(text, '9');
    const aria = await label.getAttribute('aria-label');
    assert.match(aria ?? '', /agentls: heat 1\.00, read, in the model's context/);
    const hello = page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'hello.txt' }).locator('.monaco-icon-label').first();
    assert.match(await hello.getAttribute('aria-label') ?? '', /agentls: heat 0\.\d\d, written/, 'hello.txt cools off after its write');
    await shot('3-heat');
  });

  step('runs the command once approved; the edits and the command reach the disk', async () => {
    await approval().click();
    await page.locator('.notifications-toasts .notification-toast', { hasText: 'agentls: task done' }).waitFor({ timeout: 60000 });
    await shot('4-done');

    assert.equal(fs.readFileSync(path.join(ws, 'ran.txt'), 'utf8'), 'approved\n', 'the approved command ran in the workspace');
    const commandsLog = await waitFor('the command output channel log', () => {
      const f = findFile(path.join(userData, 'logs'), (p) => /agentls:? commands\.log$/.test(p));
      const text = f ? fs.readFileSync(f, 'utf8') : '';
      return text.includes('[exit 0]') ? text : undefined;
    });
    assert.match(commandsLog, /\$ echo approved > ran\.txt && cat hello\.txt/, 'the command is shown live');
    assert.match(commandsLog, /hello from agentls\n\[exit 0\]/, 'the documents were saved before the command, which saw hello.txt');

    // The edit went into the open document, whose unsaved text the agent
    // read (old_string is only there), and was saved before the command.
    assert.equal(fs.readFileSync(path.join(ws, 'notes.txt'), 'utf8'), 'final from the agent\n');
    assert.equal(fs.readFileSync(path.join(ws, 'hello.txt'), 'utf8'), 'hello from agentls\n');
  });

  step('shows the task, its subtasks and their states in the Tasks view', async () => {
    await palette('agentls: Focus on Tasks View');
    const tree = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Tasks' }) });
    const rows = tree.locator('.monaco-list-row');
    await waitFor('the finished task in the tree', async () => (await rows.allInnerTexts()).join('\n').includes('done · 2/2'));
    const text = (await rows.allInnerTexts()).join('\n');
    assert.match(text, /Finish the notes and run the check/);
    assert.match(text, /done · 2\/2/);
    assert.match(text, /1\. Finish notes\.txt/);
    assert.match(text, /update notes\.txt/);
    assert.match(text, /create hello\.txt/);
    assert.match(text, /Tokens: 5\.5k in · 180 out/);
    assert.equal(await tree.locator('.codicon-pass-filled').count() >= 3, true, 'the task and both subtasks show the done icon');
    const status = await page.locator('.statusbar-item', { hasText: 'agentls:' }).first().innerText();
    assert.match(status, /agentls: done 2\/2/);
    await shot('5-tree');
  });
  step('shows the agent\'s change behind a line with Show Trace for Line', async () => {
    await openFile('notes.txt');
    await palette('Go to Line/Column');
    await page.keyboard.type('1');
    await page.keyboard.press('Enter');
    await page.locator('.statusbar-item', { hasText: 'Ln 1, Col 1' }).waitFor();
    await palette('agentls: Show Trace for Line');
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'update notes.txt:1' });
    await row.waitFor();
    assert.match(await row.innerText(), /script:/, 'the entry names the model');
    await shot('6-trace');
    await page.keyboard.press('Escape');
  });

  step('lists the session and opens its transcript with Show Sessions', async () => {
    await palette('agentls: Show Sessions');
    const session = page.locator('.quick-input-list .monaco-list-row', { hasText: '1 task · done' });
    await session.waitFor();
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Open Transcript' }).waitFor();
    await page.keyboard.press('Enter');
    await page.locator('.tab.active', { hasText: 'Finish the notes and run the check' }).waitFor();
    // Monaco draws spaces as no-break spaces.
    const text = async () => (await page.locator('.monaco-editor .view-lines').filter({ visible: true }).first().innerText()).replace(/\u00a0/g, ' ');
    await waitFor('the transcript', async () => /## Messages/.test(await text()));
    assert.match(await text(), /# Finish the notes and run the check/);
    assert.match(await text(), /\*\*done\*\* Finish the notes and run the check/);
    await shot('7-transcript');
  });

  step('stops a running task with agentls: Stop', async () => {
    await palette('agentls: Run Task…');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill('Think for a long time');
    await input.press('Enter');
    await page.locator('.statusbar-item', { hasText: 'agentls: planning' }).waitFor({ timeout: 30000 });
    await palette('agentls: Stop');
    await page.locator('.notifications-toasts .notification-toast', { hasText: 'agentls: task stopped' }).waitFor({ timeout: 30000 });
    const tree = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Tasks' }) });
    await waitFor('the stopped task in the tree', async () => /Think for a long time\s*stopped/.test((await tree.locator('.monaco-list-row').allInnerTexts()).join('\n')));
    await shot('8-stopped');
  });

  step('takes a settings change for the next task: in propose mode an edit waits in the refactor preview', async () => {
    // A workspace setting, as a person would set it for this project.
    fs.mkdirSync(path.join(ws, '.vscode'), { recursive: true });
    fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'), JSON.stringify({ 'agentls.editMode': 'propose' }));
    await waitFor('the settings to reach agentls', () => {
      const f = findFile(path.join(userData, 'logs'), (p) => p.endsWith('agentls.log'));
      return f && /settings sent to agentls for the next task: .*"editMode":"propose"/.test(fs.readFileSync(f, 'utf8'));
    });
    await palette('agentls: Run Task…');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill('Polish the notes');
    await input.press('Enter');

    // VS Code shows the annotated edit for confirmation before it touches anything.
    const apply = page.locator('.monaco-button', { hasText: /^Apply$/ }).first();
    await apply.waitFor({ timeout: 60000 });
    await shot('9-refactor-preview');
    assert.equal(fs.readFileSync(path.join(ws, 'notes.txt'), 'utf8'), 'final from the agent\n', 'nothing changes before Apply');
    // Edits that need confirmation come unticked: the person ticks the file, then applies.
    const row = page.locator('.monaco-list-row', { hasText: 'notes.txt' }).filter({ has: page.locator('input[type="checkbox"], [role="checkbox"]') }).last();
    await row.locator('input[type="checkbox"], [role="checkbox"]').first().click();
    await apply.click();
    await page.locator('.notifications-toasts .notification-toast', { hasText: 'agentls: task done: notes polished' }).waitFor({ timeout: 60000 });
    await palette('File: Save All');
    await waitFor('the confirmed edit on disk', () => fs.readFileSync(path.join(ws, 'notes.txt'), 'utf8') === 'polished by the agent\n');
  });
});

/** openFile opens a workspace file with Go to File. */
async function openFile(name) {
  await palette('Go to File');
  await page.keyboard.type(name);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.tab.active', { hasText: name }).waitFor();
}

/** approval is the Run button of the command's approval notification. */
function approval() {
  return page.locator('.notifications-toasts .notification-toast', { hasText: 'echo approved' })
    .getByRole('button', { name: 'Run', exact: true });
}

/** findFile walks dir for the first file whose path passes match. */
function findFile(dir, match) {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      const f = findFile(p, match);
      if (f) {
        return f;
      }
    } else if (match(p)) {
      return p;
    }
  }
  return undefined;
}
