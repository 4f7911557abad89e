// Sessions and trace entries as the person sees them: quick pick items and
// a Markdown transcript.
import { SessionInfo, SessionResult, TraceEntry } from '../protocol';
import { oneLine, usageText } from './taskModel';

export interface PickItem {
  label: string;
  description?: string;
  detail?: string;
}

/** sessionItem renders one session of agent/sessions for a quick pick. */
export function sessionItem(s: SessionInfo): PickItem & { sessionId: string } {
  const tasks = s.tasks ?? [];
  const states = tasks.map((t) => t.state);
  const last = states.length > 0 ? states[states.length - 1] : undefined;
  const usage = usageText(s.usage);
  return {
    sessionId: s.sessionId,
    label: oneLine(s.title !== '' ? s.title : s.sessionId, 80),
    description: `${tasks.length} task${tasks.length === 1 ? '' : 's'}${last !== undefined ? ` · ${last}` : ''}${usage !== '' ? ` · ${usage}` : ''}`,
    detail: `updated ${s.updatedAt}`,
  };
}

/** transcript renders agent/session as a Markdown document. */
export function transcript(s: SessionResult): string {
  const out: string[] = [`# ${s.title !== '' ? s.title : s.sessionId}`, '', `Session \`${s.sessionId}\``, ''];
  const tasks = s.tasks ?? [];
  if (tasks.length > 0) {
    out.push('## Tasks', '');
    for (const t of tasks) {
      const usage = usageText(t.usage);
      out.push(`- **${t.state}** ${oneLine(t.prompt, 120)} (\`${t.taskId}\`)${usage !== '' ? ` · ${usage}` : ''}`);
    }
    out.push('');
  }
  out.push('## Messages', '');
  const msgs = s.messages ?? [];
  if (msgs.length === 0) {
    out.push('_No messages._');
  }
  for (const m of msgs) {
    const who = m.subtaskId !== undefined && m.subtaskId !== '' ? `${m.role} · subtask ${m.subtaskId}` : m.role;
    out.push(`### ${who}`, '', `_${m.time}_`, '', m.text, '');
  }
  return out.join('\n');
}

/** traceItem renders one entry of agent/trace for a quick pick. */
export function traceItem(e: TraceEntry): PickItem & { entry: TraceEntry } {
  const ranges = (e.ranges ?? []).map((r) => (r.startLine === r.endLine ? `${r.startLine}` : `${r.startLine}-${r.endLine}`));
  return {
    entry: e,
    label: `${e.operation} ${e.path}${ranges.length > 0 ? `:${ranges.join(',')}` : ''}`,
    description: `${e.time} · ${e.model}`,
    detail: `task ${e.taskId} · subtask ${e.subtaskId}${e.intentId !== null ? ` · intent ${e.intentId}` : ''} · session ${e.sessionId}`,
  };
}
