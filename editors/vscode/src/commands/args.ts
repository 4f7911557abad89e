// What a command was given: a row of the Tasks view (its node), a task id
// from another command or a test, or nothing (the palette), read into the
// task or the waiting item it acts on.
import { PendingStore } from '../pending';
import { isFinal, TaskStore, TaskView } from '../views/taskModel';
import { Node } from '../views/taskTree';

/** nodeOf reads the tree node (or task id) a command was given. */
export function nodeOf(arg: unknown): Node | undefined {
  if (typeof arg === 'string') {
    return { kind: 'task', taskId: arg };
  }
  if (typeof arg === 'object' && arg !== null && 'kind' in arg) {
    return arg as Node;
  }
  if (typeof arg === 'object' && arg !== null && 'taskId' in arg && typeof arg.taskId === 'string') {
    return { kind: 'task', taskId: arg.taskId };
  }
  return undefined;
}

/**
 * taskOf finds the task a tree command names; given none, the newest
 * running task (running) or the newest ended one.
 */
export function taskOf(tasks: TaskStore, arg: unknown, running: boolean): TaskView | undefined {
  const n = nodeOf(arg);
  if (n !== undefined && (n.kind === 'task' || n.kind === 'subtask' || n.kind === 'change')) {
    return tasks.get(n.taskId);
  }
  return running ? tasks.running()[0] : tasks.tasks().find((t) => isFinal(t.state));
}

/** pendingId is the waiting item a command names, else the first that waits. */
export function pendingId(pending: PendingStore, arg: unknown): string | undefined {
  const n = nodeOf(arg);
  if (n?.kind === 'pending') {
    return n.id;
  }
  return pending.all()[0]?.id;
}
