// The MCP servers view: the settings sent, the quick pick items and the
// report, and agent/mcpServers of the real binary rendered by them.
import assert from 'node:assert/strict';
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createMessageConnection, MessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { initOptions } from '../../src/config';
import { MCPServersResult, MCPServerStatus, Methods } from '../../src/protocol';
import { mcpReport, mcpServerItem, stateLine } from '../../src/views/mcp';

const ready: MCPServerStatus = {
  name: 'everything', transport: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'],
  state: 'ready', restarts: 0, toolCount: 2,
  tools: [
    { name: 'mcp__everything__echo', server: 'everything', tool: 'echo', description: 'Echoes back | the input', readOnly: true },
    { name: 'mcp__everything__toggle', server: 'everything', tool: 'toggle', description: 'Toggles' },
  ],
};
const failed: MCPServerStatus = {
  name: 'remote', transport: 'http', url: 'https://mcp.example.com/mcp', state: 'failed', restarts: 1, toolCount: 0, tools: [],
  error: 'MCP server "remote" is not restarted again: it stopped after its restart',
};

describe('the MCP settings', () => {
  function source(values: Record<string, unknown>): { get(k: string): unknown } {
    return { get: (k) => values[k] };
  }
  it('sends the servers and the allowed tools as they are written', () => {
    const servers = { everything: { command: 'npx', args: ['-y', 'pkg'], env: { A: '1' } }, docs: { type: 'http', url: 'https://h/mcp', headers: { Authorization: 'Bearer ${T}' } } };
    const { options, problems } = initOptions(source({ mcpServers: servers, allowMcpTools: ['mcp__docs'] }), true);
    assert.deepEqual(problems, []);
    assert.deepEqual(options.mcpServers, servers);
    assert.deepEqual(options.allowMcpTools, ['mcp__docs']);
  });
  it('leaves out an entry the server would refuse, and says which', () => {
    const { options, problems } = initOptions(source({ mcpServers: { good: { command: 'x' }, both: { command: 'x', url: 'http://h/mcp' }, sse: { type: 'sse', url: 'http://h/sse' } } }), true);
    assert.deepEqual(Object.keys(options.mcpServers ?? {}), ['good']);
    assert.equal(problems.length, 2);
    assert.match(problems[0].message, /^both: needs "command"/);
    assert.match(problems[1].message, /^sse: "sse" is not supported/);
  });
  it('sends an empty mcpServers when none is configured, so removing the last server reaches a running agentls', () => {
    const { options } = initOptions(source({ mcpServers: {} }), true);
    assert.deepEqual(options.mcpServers, {});
  });
});

describe('the MCP servers view', () => {
  it('shows a ready server with its tool count and command line', () => {
    assert.deepEqual(mcpServerItem(ready), {
      server: 'everything', label: '$(pass) everything', description: 'ready · 2 tools', detail: 'npx -y @modelcontextprotocol/server-everything',
    });
  });
  it('shows a failed server with its error', () => {
    const item = mcpServerItem(failed);
    assert.equal(item.description, 'failed');
    assert.match(item.detail ?? '', /not restarted again/);
    assert.equal(stateLine({ ...ready, state: 'restarted', toolCount: 1 }), 'restarted · 1 tool');
  });
  it('reports every server with its tools, the names the model calls and the errors', () => {
    const md = mcpReport({ servers: [ready, failed] });
    assert.match(md, /## everything\n\n- \*\*state:\*\* ready · 2 tools\n- \*\*stdio:\*\* `npx -y @modelcontextprotocol\/server-everything`/);
    assert.match(md, /\| `echo` \| `mcp__everything__echo` \| \(read-only\) Echoes back \\\| the input \|/);
    assert.match(md, /## remote\n\n- \*\*state:\*\* failed \(restarted 1 time after a crash\)\n- \*\*http:\*\* `https:\/\/mcp.example.com\/mcp`\n- \*\*error:\*\* MCP server "remote" is not restarted again/);
  });
  it('says how to configure servers when there are none', () => {
    assert.match(mcpReport({ servers: [] }), /No MCP server is configured.*agentls\.mcpServers/s);
  });
});

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-vscode-mcp-'));

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

describe('agent/mcpServers of the agentls binary', { timeout: 120000 }, () => {
  let proc: ChildProcess;
  let conn: MessageConnection;
  let exited: Promise<number | null>;

  before(async () => {
    const bin = binary();
    const ws = path.join(tmp, 'workspace');
    fs.mkdirSync(ws, { recursive: true });
    proc = spawn(bin, ['serve', '--log-level', 'error'], { cwd: ws, env: { ...process.env, AGENTLS_STATE_DIR: path.join(tmp, 'state') }, stdio: ['pipe', 'pipe', 'pipe'] });
    exited = new Promise((resolve) => proc.on('exit', (code) => {
      resolve(code);
    }));
    if (proc.stdout === null || proc.stdin === null) {
      throw new Error('no pipes to agentls');
    }
    conn = createMessageConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin));
    conn.listen();
    const { options } = initOptions({ get: (k) => (k === 'mcpServers' ? { missing: { command: path.join(tmp, 'no-such-server') } } : undefined) }, true);
    await conn.sendRequest('initialize', { processId: process.pid, rootUri: `file://${ws}`, capabilities: {}, initializationOptions: options });
    await conn.sendNotification('initialized', {});
  });

  after(async () => {
    conn.dispose();
    proc.kill('SIGKILL');
    await exited;
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('lists a configured server as not started until it is needed', async () => {
    const res = await conn.sendRequest<MCPServersResult>(Methods.mcpServers, {});
    const servers = res.servers ?? [];
    assert.equal(servers.length, 1);
    assert.equal(mcpServerItem(servers[0]).description, 'not started');
  });

  it('starts it on request and reports why it failed', async () => {
    const res = await conn.sendRequest<MCPServersResult>(Methods.mcpServers, { start: true });
    const servers = res.servers ?? [];
    assert.equal(servers.length, 1);
    const s = servers[0];
    assert.equal(s.state, 'failed');
    assert.match(s.error ?? '', /cannot run/);
    assert.match(mcpReport(res), /## missing[\s\S]*\*\*error:\*\* MCP server "missing" failed to start/);
  });
});
