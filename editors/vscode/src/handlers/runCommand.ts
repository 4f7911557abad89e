// agent/runCommand: a shell command in the workspace, shown live in an
// output channel, bounded by its timeout and by the request's cancellation.
// The command runs in its own process group so a timeout or a stop kills
// everything it started, not just the shell.
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { RunCommandParams, RunCommandResult } from '../protocol';

/**
 * What is kept of a long output (contract §4, agent/runCommand): its first
 * outputHead bytes and its last outputTail bytes, where test failures are.
 */
export const outputHead = 256 << 10;
export const outputTail = 768 << 10;
/** The most output kept, the marker aside (1 MiB). */
export const maxOutput = outputHead + outputTail;

/** A cut moves to a line's end when one is this near (or half the part). */
const lineSnap = 1 << 10;

/** The line that stands for n dropped bytes. */
export function marker(n: number): string {
  return `\n[… ${n} bytes of output cut here …]\n`;
}

/**
 * commandEnv is env without the variables named in unset (agent/runCommand's
 * unsetEnv: the secrets agentls knows of, which a command the model asked
 * for must not inherit).
 */
export function commandEnv(env: NodeJS.ProcessEnv, unset: unknown): NodeJS.ProcessEnv {
  const names = new Set(Array.isArray(unset) ? unset.filter((n): n is string => typeof n === 'string') : []);
  return Object.fromEntries(Object.entries(env).filter(([name]) => !names.has(name)));
}

/** Where the command's output is shown as it comes. */
export interface OutputSink {
  append(text: string): void;
  show(preserveFocus: boolean): void;
}

/** The part of vscode.CancellationToken the runner uses. */
export interface Cancellation {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: () => void): { dispose(): void };
}

/**
 * CappedOutput keeps the head and the tail of a command's output in bounded
 * memory (head + 2×tail bytes) and counts what lies between. Its text never
 * splits a UTF-8 character and cuts at a line's end when one is near.
 */
export class CappedOutput {
  private readonly head: Buffer[] = [];
  private headSize = 0;
  private tail: Buffer[] = [];
  private tailSize = 0;
  private total = 0;

  constructor(
    private readonly maxHead: number = outputHead,
    private readonly maxTail: number = outputTail,
  ) {}

  write(b: Buffer): void {
    this.total += b.length;
    const room = this.maxHead - this.headSize;
    if (room > 0) {
      const part = b.subarray(0, room);
      this.head.push(part);
      this.headSize += part.length;
      b = b.subarray(part.length);
    }
    if (b.length === 0 || this.maxTail === 0) {
      return;
    }
    this.tail.push(b);
    this.tailSize += b.length;
    if (this.tailSize > 2 * this.maxTail) {
      // Compact: amortised, so many small chunks stay linear.
      const all = Buffer.concat(this.tail);
      const kept = Buffer.from(all.subarray(all.length - this.maxTail));
      this.tail = [kept];
      this.tailSize = kept.length;
    }
  }

  toString(): string {
    let head: Buffer = Buffer.concat(this.head);
    const all = Buffer.concat(this.tail);
    let tail: Buffer = all.subarray(Math.max(all.length - this.maxTail, 0));
    if (this.total === head.length + tail.length) {
      return Buffer.concat([head, tail]).toString('utf8');
    }
    head = cutHead(head);
    tail = cutTail(tail);
    const dropped = this.total - head.length - tail.length;
    return head.toString('utf8') + marker(dropped) + tail.toString('utf8');
  }
}

const isRuneStart = (b: number): boolean => (b & 0xc0) !== 0x80;

/** Bytes of the UTF-8 character a lead byte starts (1 for a stray byte). */
function runeLength(b: number): number {
  if (b >= 0xf0) {
    return 4;
  }
  if (b >= 0xe0) {
    return 3;
  }
  if (b >= 0xc0) {
    return 2;
  }
  return 1;
}

/** cutHead ends the head at a line's end near the bound, else before a split character. */
function cutHead(b: Buffer): Buffer {
  const nl = b.lastIndexOf(0x0a);
  if (nl >= 0 && b.length - (nl + 1) <= Math.min(lineSnap, Math.floor(b.length / 2))) {
    return b.subarray(0, nl + 1);
  }
  for (let i = b.length - 1; i >= 0 && i >= b.length - 4; i--) {
    if (isRuneStart(b[i])) {
      return i + runeLength(b[i]) > b.length ? b.subarray(0, i) : b;
    }
  }
  return b;
}

/** cutTail starts the tail after a line's end near the bound, else at a whole character. */
function cutTail(b: Buffer): Buffer {
  const nl = b.indexOf(0x0a);
  if (nl >= 0 && nl < Math.min(lineSnap, Math.floor(b.length / 2))) {
    return b.subarray(nl + 1);
  }
  for (let i = 0; i < b.length && i < 4; i++) {
    if (isRuneStart(b[i])) {
      return b.subarray(i);
    }
  }
  return b;
}

/**
 * Runs before each command. The extension saves the dirty documents there,
 * as VS Code does before a task (task.saveBeforeRun): an edit the agent made
 * in an open document must be on disk for the command that tests it.
 */
export type BeforeCommand = () => Thenable<unknown>;

/** CommandRunner runs agent/runCommand requests and ends them all on dispose. */
export class CommandRunner {
  private readonly running = new Set<number>();

  constructor(
    private readonly sink: OutputSink,
    private readonly before: BeforeCommand = () => Promise.resolve(),
    private readonly shell: string = process.platform === 'win32' ? 'cmd.exe' : '/bin/sh',
  ) {}

  async run(params: RunCommandParams, token?: Cancellation): Promise<RunCommandResult> {
    const command = typeof params.command === 'string' ? params.command : '';
    const cwd = typeof params.cwd === 'string' ? params.cwd : '';
    if (command.trim() === '') {
      return { exitCode: 127, output: 'cannot start: empty command' };
    }
    if (!path.isAbsolute(cwd)) {
      return { exitCode: 127, output: `cannot start: cwd ${JSON.stringify(cwd)} is not an absolute path` };
    }

    const timeoutMs = typeof params.timeoutMs === 'number' && params.timeoutMs > 0 ? params.timeoutMs : 0;
    this.sink.show(true);
    this.sink.append(`\n$ ${command}\n  (in ${cwd}${timeoutMs > 0 ? `, timeout ${timeoutMs} ms` : ''})\n`);
    try {
      await this.before();
    } catch (e) {
      this.sink.append(`could not save the open documents before the command: ${e instanceof Error ? e.message : String(e)}\n`);
    }

    return new Promise<RunCommandResult>((resolve) => {
      const out = new CappedOutput();
      const args = process.platform === 'win32' ? ['/d', '/s', '/c', command] : ['-c', command];
      const child = spawn(this.shell, args, {
        cwd,
        env: commandEnv(process.env, params.unsetEnv),
        detached: process.platform !== 'win32',
        stdio: ['ignore', 'pipe', 'pipe'],
        windowsHide: true,
      });
      let timedOut = false;
      let drain: NodeJS.Timeout | undefined;
      let killed = false;
      let settled = false;
      const kill = (): void => {
        if (killed || child.pid === undefined) {
          return;
        }
        killed = true;
        try {
          if (process.platform === 'win32') {
            child.kill('SIGKILL');
          } else {
            process.kill(-child.pid, 'SIGKILL');
          }
        } catch {
          // Already gone.
        }
      };
      const onData = (b: Buffer): void => {
        out.write(b);
        this.sink.append(b.toString('utf8'));
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);

      const timer = timeoutMs > 0
        ? setTimeout(() => {
          timedOut = true;
          kill();
        }, timeoutMs)
        : undefined;
      const cancel = token?.onCancellationRequested(kill);
      if (token?.isCancellationRequested === true) {
        kill();
      }
      if (child.pid !== undefined) {
        this.running.add(child.pid);
      }
      const finish = (result: RunCommandResult): void => {
        if (settled) {
          return;
        }
        settled = true;
        clearTimeout(timer);
        clearTimeout(drain);
        cancel?.dispose();
        if (child.pid !== undefined) {
          this.running.delete(child.pid);
        }
        const how = result.timedOut === true ? `timed out after ${timeoutMs} ms` : `exit ${result.exitCode}`;
        this.sink.append(`[${how}]\n`);
        resolve(result);
      };
      child.on('error', (err) => {
        finish({ exitCode: 127, output: `cannot start: ${err.message}` });
      });
      // 'close' waits for the output pipes; a background child that keeps
      // them open must not hold the answer up once the shell has exited.
      child.on('exit', () => {
        drain = setTimeout(() => {
          child.stdout.destroy();
          child.stderr.destroy();
        }, 2000);
      });
      child.on('close', (code, signal) => {
        const exitCode = code ?? (signal !== null ? -1 : 0);
        const result: RunCommandResult = { exitCode, output: out.toString() };
        if (timedOut) {
          result.timedOut = true;
        }
        finish(result);
      });
    });
  }

  /** Kills every command still running. */
  dispose(): void {
    for (const pid of this.running) {
      try {
        process.kill(process.platform === 'win32' ? pid : -pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    this.running.clear();
  }
}
