// agent/runCommand: a shell command in the workspace, shown live in an
// output channel, bounded by its timeout and by the request's cancellation.
// The command runs in its own process group so a timeout or a stop kills
// everything it started, not just the shell.
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { RunCommandParams, RunCommandResult } from '../protocol';

/** Where output is cut (contract §4). */
export const maxOutput = 1 << 20;

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

/** CappedOutput keeps the first maxOutput bytes and counts the rest. */
export class CappedOutput {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private cut = 0;

  constructor(private readonly limit: number = maxOutput) {}

  write(b: Buffer): void {
    const room = this.limit - this.size;
    if (room >= b.length) {
      this.chunks.push(b);
      this.size += b.length;
      return;
    }
    if (room > 0) {
      this.chunks.push(b.subarray(0, room));
      this.size += room;
    }
    this.cut += b.length - Math.max(room, 0);
  }

  toString(): string {
    // A multi-byte character split at the cut decodes as U+FFFD, never as garbage.
    const text = Buffer.concat(this.chunks).toString('utf8');
    return this.cut > 0 ? `${text}\n[output cut: ${this.cut} more bytes]\n` : text;
  }
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
