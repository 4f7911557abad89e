// Which task a request waiting on the person belongs to. The request
// (window/showMessageRequest, agent/ask, workspace/applyEdit) does not say;
// the task's `ask` event does, for approvals and questions, and a task's
// current tool calls name the files of a proposed edit. agentls sends its
// notifications apart from its requests, so either may arrive first: the
// match is tried when the request arrives and again at each notification.
import { PendingStore } from './pending';
import { TaskStore } from './views/taskModel';

/** ownerOf is the task (and subtask) of folder working on paths, or its only running task. */
export function ownerOf(tasks: TaskStore, folder: string, paths: readonly string[]): { taskId: string; subtaskId?: string } | undefined {
  const running = tasks.running().filter((t) => t.folder === folder);
  const working = (a: string): boolean => paths.some((p) => a.split(' ').includes(p));
  for (const t of running) {
    const sub = [...t.activity.entries()].find(([, a]) => working(a));
    if (sub !== undefined) {
      return sub[0] !== '' ? { taskId: t.taskId, subtaskId: sub[0] } : { taskId: t.taskId };
    }
  }
  const only = running.length === 1 ? running.at(0) : undefined;
  return only !== undefined ? { taskId: only.taskId } : undefined;
}

function same(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** attributePending gives each waiting item of folder that has no task yet the task it belongs to, once known. */
export function attributePending(pending: PendingStore, tasks: TaskStore, folder: string): void {
  for (const p of pending.all()) {
    if (p.folder !== folder || p.taskId !== undefined) {
      continue;
    }
    if (p.kind === 'proposal') {
      const owner = ownerOf(tasks, folder, (p.files ?? []).map((f) => f.path));
      if (owner !== undefined) {
        pending.attribute(p.id, owner.taskId, owner.subtaskId);
      }
      continue;
    }
    const ask = tasks.claimAsk(folder, (a) => (p.kind === 'approval' ? same(a.options, p.options) : a.question === p.asked));
    if (ask !== undefined) {
      pending.attribute(p.id, ask.taskId, ask.subtaskId);
    }
  }
}
