// What the end-to-end tests share: the environment they need, a free port
// for code-server, waiting for a state (never for a time), and finding the
// log files VS Code writes.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';

/** required is the environment variable name, failing when it is unset. */
export function required(name) {
  const v = process.env[name];
  if (v === undefined || v === '') {
    throw new Error(`${name} is not set`);
  }
  return v;
}

/** A free loopback port. */
export function freePort() {
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
export async function waitFor(what, check, timeoutMs = 30000) {
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

/**
 * setExpanded unfolds (true) or folds (false) a row of a tree view with
 * its twistie, and waits until the row says so (aria-expanded). A click
 * lost to a re-render of the tree (the Heat view refreshes as the heat
 * changes; a loaded machine renders late) is made again once the row has
 * kept its state for a while: the row's state is what a test needs, and a
 * second click that toggled it back would be worse than a late one.
 */
export async function setExpanded(row, want, timeoutMs = 60000) {
  const is = async () => (await row.getAttribute('aria-expanded')) === String(want);
  const deadline = Date.now() + timeoutMs;
  while (!await is()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out ${want ? 'unfolding' : 'folding'} ${await row.innerText().catch(() => 'a row')}`);
    }
    await row.locator('.monaco-tl-twistie').click();
    try {
      await waitFor('the row to take the click', is, 10000);
    } catch {
      // Not taken: click again.
    }
  }
}

/** findFile walks dir for the first file whose path passes match. */
export function findFile(dir, match) {
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
