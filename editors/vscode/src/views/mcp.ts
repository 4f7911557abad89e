// The MCP servers of agent/mcpServers as the person sees them: quick pick
// items and a Markdown report.
import { MCPServerStatus, MCPServersResult } from '../protocol';
import { oneLine } from './taskModel';
import { PickItem } from './sessions';

const stateText: Record<string, string> = {
  notStarted: 'not started',
  starting: 'starting',
  ready: 'ready',
  failed: 'failed',
  restarted: 'restarted',
};

const stateIcon: Record<string, string> = {
  notStarted: '$(circle-outline)',
  starting: '$(loading~spin)',
  ready: '$(pass)',
  failed: '$(error)',
  restarted: '$(debug-restart)',
};

/** where says how a server is reached: its command line or its URL. */
export function where(s: MCPServerStatus): string {
  if (s.transport === 'http') {
    return s.url ?? '';
  }
  return [s.command ?? '', ...(s.args ?? [])].join(' ').trim();
}

/** stateLine is a server's state in words, with its tool count when it has tools. */
export function stateLine(s: MCPServerStatus): string {
  const state = stateText[s.state] ?? s.state;
  if (s.state === 'ready' || s.state === 'restarted') {
    return `${state} · ${s.toolCount} tool${s.toolCount === 1 ? '' : 's'}`;
  }
  return state;
}

/** mcpServerItem renders one server for a quick pick. */
export function mcpServerItem(s: MCPServerStatus): PickItem & { server: string } {
  return {
    server: s.name,
    label: `${stateIcon[s.state] ?? ''} ${s.name}`.trim(),
    description: stateLine(s),
    detail: s.error !== undefined && s.error !== '' ? oneLine(s.error, 200) : oneLine(where(s), 200),
  };
}

/** mcpReport renders agent/mcpServers as a Markdown document. */
export function mcpReport(res: MCPServersResult): string {
  const servers = res.servers ?? [];
  const out: string[] = ['# agentls: MCP servers', ''];
  if (servers.length === 0) {
    out.push('_No MCP server is configured._ Add them to the `agentls.mcpServers` setting, e.g.', '',
      '```json', '"agentls.mcpServers": {"everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]}}', '```');
    return out.join('\n');
  }
  for (const s of servers) {
    out.push(`## ${s.name}`, '', `- **state:** ${stateLine(s)}${s.restarts > 0 ? ` (restarted ${s.restarts} time${s.restarts === 1 ? '' : 's'} after a crash)` : ''}`,
      `- **${s.transport}:** \`${where(s)}\``);
    if (s.error !== undefined && s.error !== '') {
      out.push(`- **error:** ${s.error}`);
    }
    const tools = s.tools ?? [];
    if (tools.length > 0) {
      out.push('', '| tool | the model calls it | |', '|---|---|---|');
      for (const t of tools) {
        const desc = oneLine(t.description ?? '', 100).replace(/\|/g, '\\|');
        out.push(`| \`${t.tool}\` | \`${t.name}\` | ${t.readOnly === true ? '(read-only) ' : ''}${desc} |`);
      }
    }
    out.push('');
  }
  return out.join('\n');
}
