import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as vscode from 'vscode';
import { readFile, ReadFileDeps, ReadFileError, targetUri } from '../../src/handlers/readFile';

function doc(uri: string, text: string): vscode.TextDocument {
  return { uri: vscode.Uri.parse(uri), getText: () => text } as unknown as vscode.TextDocument;
}

function deps(docs: vscode.TextDocument[], disk: Record<string, string>): ReadFileDeps & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    textDocuments: () => docs,
    readFile: (uri) => {
      reads.push(uri.path);
      const text = Object.hasOwn(disk, uri.path) ? disk[uri.path] : undefined;
      if (text === undefined) {
        return Promise.reject(new Error(`EntryNotFound (FileSystemError): ${uri.toString()}`));
      }
      return Promise.resolve(new TextEncoder().encode(text));
    },
    root: () => vscode.Uri.file('/ws'),
  };
}

describe('agent/readFile', () => {
  it('answers with the open document\'s unsaved text rather than the disk', async () => {
    const d = deps([doc('file:///ws/main.go', 'package main // unsaved')], { '/ws/main.go': 'package main' });
    const res = await readFile({ path: 'main.go', uri: 'file:///ws/main.go' }, d);
    assert.deepEqual(res, { content: 'package main // unsaved' });
    assert.deepEqual(d.reads, [], 'the disk is not read when the document is open');
  });

  it('reads the file system when the document is not open', async () => {
    const d = deps([doc('file:///ws/other.go', 'x')], { '/ws/dir/a b.txt': 'héllo\n' });
    const res = await readFile({ path: 'dir/a b.txt', uri: 'file:///ws/dir/a%20b.txt' }, d);
    assert.deepEqual(res, { content: 'héllo\n' });
  });

  it('resolves a request that only names a path against the workspace root', async () => {
    const d = deps([], { '/ws/src/x.ts': 'export {};' });
    assert.deepEqual(await readFile({ path: 'src/x.ts', uri: '' }, d), { content: 'export {};' });
  });

  it('reports a missing file as an error naming the path', async () => {
    const d = deps([], {});
    await assert.rejects(readFile({ path: 'gone.txt', uri: 'file:///ws/gone.txt' }, d), (e: unknown) => {
      assert.ok(e instanceof ReadFileError);
      assert.match(e.message, /cannot read gone\.txt/);
      return true;
    });
  });

  it('refuses a request that names neither uri nor path', () => {
    assert.throws(() => targetUri({ path: '', uri: '' }, vscode.Uri.file('/ws')), /neither uri nor path/);
  });

  it('refuses a relative path without a workspace folder', () => {
    assert.throws(() => targetUri({ path: 'a.txt', uri: '' }, undefined), /no workspace folder/);
  });
});
