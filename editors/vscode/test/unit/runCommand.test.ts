import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import * as vscode from 'vscode';
import { CappedOutput, CommandRunner, OutputSink, marker } from '../../src/handlers/runCommand';

class Sink implements OutputSink {
  text = '';
  shown = 0;
  onAppend: ((text: string) => void) | undefined;
  append(t: string): void {
    this.text += t;
    this.onAppend?.(this.text);
  }
  show(): void {
    this.shown++;
  }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentls-vscode-run-'));
after(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** alive tells whether pid is a live (not zombie) process. */
function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

/** gone waits (with a deadline) for pid to end. */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    if (!alive(pid)) {
      return true;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

describe('agent/runCommand', () => {
  it('runs the command in cwd and answers stdout and stderr combined, with the exit code', async () => {
    const sink = new Sink();
    const res = await new CommandRunner(sink).run({ command: 'pwd; echo out; echo err >&2; exit 3', cwd: dir, timeoutMs: 30000 });
    assert.equal(res.exitCode, 3);
    assert.equal(res.timedOut, undefined);
    assert.match(res.output, new RegExp(`^${fs.realpathSync(dir)}\n`));
    assert.match(res.output, /out\n/);
    assert.match(res.output, /err\n/);
  });

  it('shows the command and its output live in the output channel', async () => {
    const sink = new Sink();
    await new CommandRunner(sink).run({ command: 'echo visible', cwd: dir, timeoutMs: 30000 });
    assert.equal(sink.shown, 1);
    assert.match(sink.text, /\$ echo visible/);
    assert.match(sink.text, /visible\n\[exit 0\]/);
  });

  it('kills the whole process group at the timeout and says so', async () => {
    const pidFile = path.join(dir, 'bg.pid');
    const res = await new CommandRunner(new Sink()).run({
      command: `sleep 60 & echo $! > ${pidFile}; echo started; wait`,
      cwd: dir,
      timeoutMs: 300,
    });
    assert.equal(res.timedOut, true);
    assert.equal(res.exitCode, -1);
    assert.match(res.output, /started/);
    const bg = Number(fs.readFileSync(pidFile, 'utf8'));
    assert.ok(await gone(bg), 'the background child was killed with the shell');
  });

  it('kills the command when the request is cancelled', async () => {
    const source = new vscode.CancellationTokenSource();
    const sink = new Sink();
    sink.onAppend = (text) => {
      if (text.includes('go\n')) {
        source.cancel();
      }
    };
    const running = new CommandRunner(sink).run({ command: 'echo go; sleep 60', cwd: dir, timeoutMs: 0 }, source.token);
    const res = await running;
    assert.equal(res.exitCode, -1);
    assert.equal(res.timedOut, undefined, 'a cancel is not a timeout');
  });

  it('answers at once when the shell exits while a background child keeps the output open', async () => {
    const res = await new CommandRunner(new Sink()).run({ command: 'sleep 30 & echo done', cwd: dir, timeoutMs: 60000 });
    assert.equal(res.exitCode, 0);
    assert.match(res.output, /done/);
  });

  it('runs the command without the variables of unsetEnv', async () => {
    process.env.AGENTLS_TEST_API_KEY = 'sk-vscode-0123456789';
    process.env.AGENTLS_TEST_PLAIN = 'inherited';
    try {
      const res = await new CommandRunner(new Sink()).run({
        command: 'echo "key=$AGENTLS_TEST_API_KEY plain=$AGENTLS_TEST_PLAIN"',
        cwd: dir,
        timeoutMs: 30000,
        unsetEnv: ['AGENTLS_TEST_API_KEY'],
      });
      assert.equal(res.output, 'key= plain=inherited\n');
      assert.equal(process.env.AGENTLS_TEST_API_KEY, 'sk-vscode-0123456789', "the extension's own environment is kept");
    } finally {
      delete process.env.AGENTLS_TEST_API_KEY;
      delete process.env.AGENTLS_TEST_PLAIN;
    }
  });

  it('answers 127 for a cwd that does not exist', async () => {
    const res = await new CommandRunner(new Sink()).run({ command: 'true', cwd: path.join(dir, 'missing'), timeoutMs: 1000 });
    assert.equal(res.exitCode, 127);
    assert.match(res.output, /cannot start/);
  });

  it('answers 127 for a relative cwd without running anything', async () => {
    const sink = new Sink();
    const res = await new CommandRunner(sink).run({ command: 'touch x', cwd: 'rel', timeoutMs: 1000 });
    assert.equal(res.exitCode, 127);
    assert.match(res.output, /not an absolute path/);
    assert.equal(sink.text, '');
  });

  it('keeps the head and the tail of output past 1 MiB and says how much was left out', async () => {
    const res = await new CommandRunner(new Sink()).run({
      command: 'echo FIRST; head -c 1100000 /dev/zero | tr "\\0" a; echo; echo LAST',
      cwd: dir,
      timeoutMs: 30000,
    });
    assert.equal(res.exitCode, 0);
    assert.match(res.output, /^FIRST\n/);
    assert.match(res.output, /\na*\nLAST\n$/);
    const m = /\n\[… (\d+) bytes of output cut here …\]\n/.exec(res.output);
    assert.ok(m !== null, 'the output says how much was cut');
    const total = 'FIRST\n'.length + 1100000 + '\nLAST\n'.length;
    assert.equal(Buffer.byteLength(res.output) - Buffer.byteLength(m[0]) + Number(m[1]), total);
  });

  it('kills every running command on dispose', async () => {
    const runner = new CommandRunner(new Sink());
    const pidFile = path.join(dir, 'dispose.pid');
    const running = runner.run({ command: `echo $$ > ${pidFile}; sleep 60`, cwd: dir, timeoutMs: 0 });
    for (let i = 0; i < 200 && !fs.existsSync(pidFile); i++) {
      await new Promise((r) => setTimeout(r, 25));
    }
    runner.dispose();
    const res = await running;
    assert.equal(res.exitCode, -1);
  });
});

describe('CappedOutput', () => {
  const capped = (head: number, tail: number, ...parts: string[]): string => {
    const c = new CappedOutput(head, tail);
    for (const p of parts) {
      c.write(Buffer.from(p));
    }
    return c.toString();
  };
  it('keeps everything under the limit', () => {
    assert.equal(capped(5, 5, 'hello', 'world'), 'helloworld');
  });
  it('keeps the head and the tail around the count of bytes cut', () => {
    assert.equal(capped(4, 4, 'abcdef', 'ghijklmn'), `abcd${marker(6)}klmn`);
  });
  it('keeps the latest tail across many small writes', () => {
    assert.equal(capped(2, 3, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'), `ab${marker(5)}hij`);
  });
  it('ends the head at a line end near the bound', () => {
    assert.equal(capped(8, 8, 'one\ntwoXX', '-'.repeat(20), 'YYthree\nfour'), `one\n${marker(33)}four`);
  });
  it('never splits a character at the head or the tail', () => {
    assert.equal(capped(5, 4, 'abcd€', '…………', 'wxyz'), `abcd${marker(15)}wxyz`);
    assert.equal(capped(4, 5, 'abcd', '…………', '€wxyz'), `abcd${marker(15)}wxyz`);
  });
});

describe('saving before a command', () => {
  it('runs the before hook first, so the command sees what it saved', async () => {
    const file = path.join(dir, 'saved.txt');
    const runner = new CommandRunner(new Sink(), () => {
      fs.writeFileSync(file, 'saved by the editor\n');
      return Promise.resolve();
    });
    const res = await runner.run({ command: 'cat saved.txt', cwd: dir, timeoutMs: 10000 });
    assert.equal(res.output, 'saved by the editor\n');
  });

  it('still runs the command when saving fails, and says so', async () => {
    const sink = new Sink();
    const runner = new CommandRunner(sink, () => Promise.reject(new Error('disk full')));
    const res = await runner.run({ command: 'echo ran', cwd: dir, timeoutMs: 10000 });
    assert.equal(res.exitCode, 0);
    assert.match(sink.text, /could not save the open documents before the command: disk full/);
  });
});
