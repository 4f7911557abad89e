import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EditLog } from '../../src/edits';
import { defaultAskDeps } from '../../src/handlers/ask';
import { Inbox } from '../../src/inbox';
import { Pending, PendingStore } from '../../src/pending';
import { Person } from './person';

/** proposal puts a proposal in the store; answers are the answers it got. */
function proposal(pending: PendingStore, answers: (string | null)[]): Pending {
  return pending.add({
    kind: 'proposal', folder: 'file:///p', folderName: 'p', text: 'update notes.txt', markdown: 'update notes.txt',
    options: ['Accept', 'Reject'], files: [{ path: 'notes.txt', operation: 'update' }],
  }, (v) => answers.push(v));
}

/** settled waits for the promises a notification's answer runs on. */
function settled(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

describe('a proposal is asked in one place', () => {
  it('asks with the conversation view\'s card alone when the person sees the view: no notification', () => {
    const person = new Person();
    const pending = new PendingStore();
    const inbox = new Inbox(pending, new EditLog(), defaultAskDeps(), () => true);
    inbox.notifyProposal(proposal(pending, []));
    assert.deepEqual(person.shown, []);
  });

  it('asks with a notification when the view is not seen, and its answer is the proposal\'s', async () => {
    const person = new Person().will('Accept');
    const pending = new PendingStore();
    const answers: (string | null)[] = [];
    new Inbox(pending, new EditLog(), defaultAskDeps(), () => false).notifyProposal(proposal(pending, answers));
    await settled();
    assert.deepEqual(person.shown, [{ kind: 'info', text: 'agentls proposes a change: update notes.txt', actions: ['Review…', 'Accept', 'Reject'] }]);
    assert.deepEqual(answers, ['Accept']);
  });

  it('drops a notification\'s answer once the proposal was answered elsewhere, without a word', async () => {
    let reply: (v: string) => void = () => undefined;
    const person = new Person().will(() => new Promise<string>((resolve) => { reply = resolve; }));
    const pending = new PendingStore();
    const answers: (string | null)[] = [];
    const p = proposal(pending, answers);
    new Inbox(pending, new EditLog(), defaultAskDeps(), () => false).notifyProposal(p);
    pending.answer(p.id, 'Reject'); // the card, or the Tasks view, answered first
    reply('Review…');
    await settled();
    assert.deepEqual(answers, ['Reject']);
    assert.equal(person.shown.length, 1, 'no "already answered" message after the notification');
  });
});
