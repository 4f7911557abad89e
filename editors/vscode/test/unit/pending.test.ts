import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pendingTitle, PendingStore } from '../../src/pending';

function approval(store: PendingStore, answers: (string | null)[]) {
  return store.add({ kind: 'approval', folder: 'f', folderName: 'f', text: 'run ls?', markdown: 'run `ls`?', options: ['Run', 'Deny'] }, (a) => answers.push(a));
}

describe('what waits on the person', () => {
  it('holds an item until it is answered, once', () => {
    const store = new PendingStore();
    const answers: (string | null)[] = [];
    let changes = 0;
    store.onDidChange(() => changes++);
    const p = approval(store, answers);
    assert.deepEqual(store.all().map((x) => x.id), [p.id]);
    assert.equal(store.answer(p.id, 'Run'), 'answered');
    assert.equal(store.answer(p.id, 'Deny'), 'gone', 'a second answer from another place is too late');
    assert.deepEqual(answers, ['Run']);
    assert.equal(changes, 2);
  });

  it('refuses an answer that is not offered, but takes a dismissal', () => {
    const store = new PendingStore();
    const answers: (string | null)[] = [];
    const p = approval(store, answers);
    assert.equal(store.answer(p.id, 'Sure'), 'invalid');
    assert.equal(store.answer(p.id, null), 'answered');
    assert.deepEqual(answers, [null]);
  });

  it('takes any text for a question without options', () => {
    const store = new PendingStore();
    const answers: (string | null)[] = [];
    const p = store.add({ kind: 'question', folder: 'f', folderName: 'f', text: 'Port?', markdown: 'Port?', options: [] }, (a) => answers.push(a));
    assert.equal(store.answer(p.id, '8080'), 'answered');
    assert.deepEqual(answers, ['8080']);
    assert.equal(pendingTitle(p), 'Question: Port?');
  });

  it('answers nothing for an item withdrawn by agentls', () => {
    const store = new PendingStore();
    const answers: (string | null)[] = [];
    const p = approval(store, answers);
    store.withdraw(p.id);
    assert.equal(store.answer(p.id, 'Run'), 'gone');
    assert.deepEqual(answers, []);
  });

  it('answers a proposal under review only from the refactor preview', async () => {
    const store = new PendingStore();
    const answers: (string | null)[] = [];
    let reviews = 0;
    const p = store.add({ kind: 'proposal', folder: 'f', folderName: 'f', text: 'update a', markdown: 'update a', options: ['Accept', 'Reject'] }, (a) => answers.push(a), () => {
      reviews++;
      store.setReviewing(p.id, true);
      return Promise.resolve();
    });
    assert.equal(store.review(p.id), 'started');
    await Promise.resolve();
    assert.equal(reviews, 1);
    assert.equal(store.answer(p.id, 'Accept'), 'reviewing');
    assert.equal(store.review(p.id), 'reviewing');
    assert.deepEqual(answers, []);
  });

  it('drops what a stopped agentls asked', () => {
    const store = new PendingStore();
    approval(store, []);
    store.add({ kind: 'question', folder: 'g', folderName: 'g', text: 'q', markdown: 'q', options: [] }, () => undefined);
    store.withdrawFolder('f');
    assert.deepEqual(store.all().map((p) => p.folder), ['g']);
  });
});
