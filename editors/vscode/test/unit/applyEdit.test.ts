import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as vscode from 'vscode';
import { EditLog } from '../../src/edits';
import { applyEdit, HOLD_OPEN, LspWorkspaceEdit, needsConfirmation, withoutConfirmation } from '../../src/handlers/applyEdit';
import { PendingStore } from '../../src/pending';
import { TaskStore } from '../../src/views/taskModel';
import { FakeEditor, until } from './fakes';

const token = (): vscode.CancellationToken => new vscode.CancellationTokenSource().token;

/** update replaces line 0 of rel (its first word) with text. */
function update(ed: FakeEditor, rel: string, from: number, to: number, text: string, confirm = false): LspWorkspaceEdit {
  const edit: LspWorkspaceEdit = {
    documentChanges: [{
      textDocument: { uri: ed.uri(rel), version: null },
      edits: [{ range: { start: { line: 0, character: from }, end: { line: 0, character: to } }, newText: text, ...(confirm ? { annotationId: 'a' } : {}) }],
    }],
  };
  if (confirm) {
    edit.changeAnnotations = { a: { label: `update ${rel}`, needsConfirmation: true } };
  }
  return edit;
}

function create(ed: FakeEditor, rel: string, text: string, confirm = false): LspWorkspaceEdit {
  const edit: LspWorkspaceEdit = {
    documentChanges: [
      { kind: 'create', uri: ed.uri(rel), options: {}, ...(confirm ? { annotationId: 'a' } : {}) },
      { textDocument: { uri: ed.uri(rel), version: null }, edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: text, ...(confirm ? { annotationId: 'a' } : {}) }] },
    ],
  };
  if (confirm) {
    edit.changeAnnotations = { a: { label: `create ${rel}`, needsConfirmation: true } };
  }
  return edit;
}

describe('workspace/applyEdit', () => {
  it('applies an edit that needs no confirmation and saves the files it touched', async () => {
    const ed = new FakeEditor();
    ed.disk.set(ed.uri('a.txt'), 'hello world\n');
    const edits = new EditLog();
    const res = await applyEdit({ label: 'agentls: update a.txt', edit: update(ed, 'a.txt', 0, 5, 'howdy') }, ed.deps({ pending: new PendingStore(), edits }), token());
    assert.deepEqual(res, { applied: true });
    assert.equal(ed.disk.get(ed.uri('a.txt')), 'howdy world\n', 'saved to disk');
    assert.deepEqual(ed.saved, ['a.txt']);
    const rec = edits.latest(ed.deps({ pending: new PendingStore() }).folder.key, 'a.txt');
    assert.equal(rec?.before, 'hello world\n');
    assert.equal(rec.after, 'howdy world\n');
  });

  it('leaves a file the person had unsaved changes in unsaved', async () => {
    const ed = new FakeEditor();
    ed.disk.set(ed.uri('a.txt'), 'on disk\n');
    ed.open('a.txt', 'typed not saved\n', true);
    const res = await applyEdit({ edit: update(ed, 'a.txt', 0, 5, 'TYPED') }, ed.deps({ pending: new PendingStore() }), token());
    assert.deepEqual(res, { applied: true });
    assert.equal(ed.text('a.txt'), 'TYPED not saved\n');
    assert.equal(ed.disk.get(ed.uri('a.txt')), 'on disk\n', 'the person\'s unsaved text is theirs to save');
    assert.deepEqual(ed.saved, []);
  });

  it('saves a file it creates', async () => {
    const ed = new FakeEditor();
    const res = await applyEdit({ edit: create(ed, 'new.txt', 'fresh\n') }, ed.deps({ pending: new PendingStore() }), token());
    assert.deepEqual(res, { applied: true });
    assert.equal(ed.disk.get(ed.uri('new.txt')), 'fresh\n');
  });

  it('opens, before the edit lands, the files it changes that were not open, for the language servers to check them', async () => {
    const ed = new FakeEditor();
    ed.disk.set(ed.uri('closed.go'), 'package a\n');
    ed.open('shown.go', 'package b\n');
    ed.disk.set(ed.uri('gone.go'), 'package c\n');
    const edit: LspWorkspaceEdit = {
      documentChanges: [
        ...(update(ed, 'closed.go', 0, 7, 'PACKAGE').documentChanges ?? []),
        ...(update(ed, 'shown.go', 0, 7, 'PACKAGE').documentChanges ?? []),
        ...(create(ed, 'new.go', 'package d\n').documentChanges ?? []),
        { kind: 'delete', uri: ed.uri('gone.go') },
      ],
    };
    const res = await applyEdit({ edit }, ed.deps({ pending: new PendingStore() }), token());
    assert.deepEqual(res, { applied: true });
    // Only the one that was not open, and before the edit landed: the
    // document the edit opens itself closes when it is saved.
    assert.deepEqual(ed.opened, [{ rel: 'closed.go', appliedBefore: 0 }]);
    assert.equal(ed.disk.get(ed.uri('closed.go')), 'PACKAGE a\n');
  });

  it('opens at most HOLD_OPEN files of one edit, and applies it when one cannot be opened', async () => {
    const ed = new FakeEditor();
    const edit: LspWorkspaceEdit = { documentChanges: [] };
    for (let i = 0; i < HOLD_OPEN + 5; i++) {
      ed.disk.set(ed.uri(`f${i}.txt`), 'hello\n');
      edit.documentChanges?.push(...(update(ed, `f${i}.txt`, 0, 5, 'howdy').documentChanges ?? []));
    }
    ed.unopenable.add('f0.txt');
    const res = await applyEdit({ edit }, ed.deps({ pending: new PendingStore() }), token());
    assert.deepEqual(res, { applied: true });
    assert.equal(ed.opened.length, HOLD_OPEN - 1, 'f0 failed to open and counts toward the bound');
    assert.ok(ed.opened.every((o) => o.appliedBefore === 0));
    for (let i = 0; i < HOLD_OPEN + 5; i++) {
      assert.equal(ed.disk.get(ed.uri(`f${i}.txt`)), 'howdy\n');
    }
  });

  it('refuses an edit whose document version is not the open one', async () => {
    const ed = new FakeEditor();
    ed.open('a.txt', 'abc\n');
    const edit = update(ed, 'a.txt', 0, 1, 'x');
    const change = edit.documentChanges?.[0];
    assert.ok(change !== undefined && 'textDocument' in change);
    change.textDocument.version = 7;
    const res = await applyEdit({ edit }, ed.deps({ pending: new PendingStore() }), token());
    assert.equal(res.applied, false);
    assert.match(res.failureReason ?? '', /a\.txt changed in the editor/);
  });

  it('answers a malformed edit with a reason, not an exception', async () => {
    const ed = new FakeEditor();
    assert.deepEqual(await applyEdit({ edit: 'x' }, ed.deps({ pending: new PendingStore() }), token()),
      { applied: false, failureReason: 'workspace/applyEdit: edit must be a WorkspaceEdit' });
  });

  describe('a proposal (an edit that needs confirmation)', () => {
    function propose(ed: FakeEditor, pending: PendingStore, tasks = new TaskStore()) {
      ed.disk.set(ed.uri('a.txt'), 'hello world\n');
      const edits = new EditLog();
      const res = applyEdit({ label: 'agentls: update a.txt', edit: update(ed, 'a.txt', 0, 5, 'howdy', true) }, ed.deps({ pending, edits, tasks }), token());
      return { res, edits };
    }

    it('waits for the person, with its files and their diffs', async () => {
      const ed = new FakeEditor();
      const pending = new PendingStore();
      const { edits } = propose(ed, pending);
      await until('the proposal', () => pending.all().length === 1);
      const [p] = pending.all();
      assert.equal(p.kind, 'proposal');
      assert.equal(p.text, 'update a.txt');
      assert.deepEqual(p.options, ['Accept', 'Reject']);
      assert.equal(p.files?.[0]?.path, 'a.txt');
      const rec = edits.get(p.files[0].diffId ?? '');
      assert.equal(rec?.after, 'howdy world\n', 'the diff shows the proposed text');
      assert.equal(ed.proposals.length, 1, 'the person is told');
      assert.equal(ed.text('a.txt'), 'hello world\n', 'nothing changes before an answer');
    });

    it('applies the whole edit, without the preview, when accepted, and saves it', async () => {
      const ed = new FakeEditor();
      const pending = new PendingStore();
      const { res } = propose(ed, pending);
      await until('the proposal', () => pending.all().length === 1);
      assert.equal(pending.answer(pending.all()[0]?.id ?? '', 'Accept'), 'answered');
      assert.deepEqual(await res, { applied: true });
      assert.equal(ed.disk.get(ed.uri('a.txt')), 'howdy world\n');
      assert.equal(needsConfirmation(ed.applied[0] ?? {}), false, 'applied without its annotations');
      assert.equal(pending.all().length, 0);
    });

    it('tells agentls a rejection as not applied, with the reason', async () => {
      const ed = new FakeEditor();
      const pending = new PendingStore();
      const { res } = propose(ed, pending);
      await until('the proposal', () => pending.all().length === 1);
      pending.answer(pending.all()[0]?.id ?? '', 'Reject');
      assert.deepEqual(await res, { applied: false, failureReason: 'rejected by the user' });
      assert.equal(ed.text('a.txt'), 'hello world\n');
    });

    it('refuses to apply when the file changed while the proposal waited', async () => {
      const ed = new FakeEditor();
      const pending = new PendingStore();
      const { res } = propose(ed, pending);
      await until('the proposal', () => pending.all().length === 1);
      ed.open('a.txt', 'hello there world\n', true);
      pending.answer(pending.all()[0]?.id ?? '', 'Accept');
      const r = await res;
      assert.equal(r.applied, false);
      assert.match(r.failureReason ?? '', /a\.txt changed in the editor while the proposal waited/);
      assert.equal(ed.text('a.txt'), 'hello there world\n', 'the person\'s text is untouched');
    });

    it('opens the refactor preview for a review, and takes its answer', async () => {
      const ed = new FakeEditor();
      const pending = new PendingStore();
      const { res } = propose(ed, pending);
      await until('the proposal', () => pending.all().length === 1);
      const id = pending.all()[0]?.id ?? '';
      assert.equal(pending.review(id), 'started');
      assert.deepEqual(await res, { applied: true });
      assert.equal(needsConfirmation(ed.applied[0] ?? {}), true, 'the preview got the annotated edit');
      assert.equal(pending.all().length, 0);
      assert.equal(pending.answer(id, 'Reject'), 'gone', 'answered once');
    });

    it('takes a discarded review as a rejection', async () => {
      const ed = new FakeEditor();
      ed.preview = 'discard';
      const pending = new PendingStore();
      const { res } = propose(ed, pending);
      await until('the proposal', () => pending.all().length === 1);
      pending.review(pending.all()[0]?.id ?? '');
      assert.deepEqual(await res, { applied: false, failureReason: 'rejected by the user in the refactor preview' });
    });

    it('is withdrawn when agentls cancels the request', async () => {
      const ed = new FakeEditor();
      ed.disk.set(ed.uri('a.txt'), 'hello world\n');
      const pending = new PendingStore();
      const cts = new vscode.CancellationTokenSource();
      const res = applyEdit({ edit: update(ed, 'a.txt', 0, 5, 'howdy', true) }, ed.deps({ pending }), cts.token);
      await until('the proposal', () => pending.all().length === 1);
      cts.cancel();
      assert.equal((await res).applied, false);
      assert.equal(pending.all().length, 0);
    });

    it('belongs to the task of the folder that waits on the person, working on the file', async () => {
      const ed = new FakeEditor();
      const pending = new PendingStore();
      const tasks = new TaskStore();
      const folder = ed.deps({ pending }).folder.key;
      const subtasks = [{ id: '1', content: 'x', state: 'running' as const, dependsOn: [] }];
      tasks.update({ taskId: 'other', sessionId: 's', seq: 1, state: 'running', subtasks, event: { kind: 'planned' } }, folder);
      tasks.update({ taskId: 't1', sessionId: 's', seq: 1, state: 'running', subtasks, event: { kind: 'toolCall', subtaskId: '1', tool: 'edit_file', arguments: { path: 'a.txt' } } }, folder);
      tasks.update({ taskId: 't1', sessionId: 's', seq: 2, state: 'waiting', subtasks, event: { kind: 'stateChanged' } }, folder);
      propose(ed, pending, tasks);
      await until('the proposal', () => pending.all().length === 1);
      assert.equal(pending.all()[0]?.taskId, 't1');
      assert.equal(pending.all()[0]?.subtaskId, '1');
    });
  });

  it('strips the annotations of an accepted edit, and only them', () => {
    const ed = new FakeEditor();
    const e = withoutConfirmation(create(ed, 'n.txt', 'x', true));
    assert.equal(e.changeAnnotations, undefined);
    assert.deepEqual(e.documentChanges?.map((c) => ('textDocument' in c ? c.edits.map((x) => x.newText) : c.kind)), ['create', ['x']]);
    assert.equal(JSON.stringify(e).includes('annotationId'), false);
  });
});
