import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as vscode from 'vscode';
import { ConversationView } from '../../src/views/conversation';
import { FromView, ToView, ViewState } from '../../src/webview/state';
import * as stub from './vscode-stub/vscode';

/** A webview view as VS Code makes it: folded or not, the messages posted to its page kept. */
class FakeView {
  visible = false;
  readonly posted: ToView[] = [];
  /** show's preserveFocus, each time it is called. */
  readonly shows: boolean[] = [];
  private readonly visibility = new stub.EventEmitter<undefined>();
  readonly fromPage = new stub.EventEmitter<unknown>();
  readonly onDidChangeVisibility = this.visibility.event;
  readonly onDidDispose = new stub.EventEmitter<undefined>().event;
  readonly webview = {
    options: {},
    html: '',
    cspSource: 'vscode-resource:',
    asWebviewUri: (u: vscode.Uri) => u,
    postMessage: (m: ToView) => {
      this.posted.push(m);
      return Promise.resolve(true);
    },
    onDidReceiveMessage: this.fromPage.event,
  };

  show(preserveFocus?: boolean): void {
    // VS Code unfolds the view later, and says so with onDidChangeVisibility.
    this.shows.push(preserveFocus === true);
  }

  unfold(): void {
    this.visible = true;
    this.visibility.fire(undefined);
  }

  fold(): void {
    this.visible = false;
    this.visibility.fire(undefined);
  }

  focuses(): number {
    return this.posted.filter((m) => m.type === 'focus').length;
  }
}

function made(): { conv: ConversationView; view: FakeView } {
  const conv = new ConversationView(vscode.Uri.file('/ext'), () => ({}) as ViewState, (_m: FromView) => undefined);
  const view = new FakeView();
  conv.resolveWebviewView(view as unknown as vscode.WebviewView);
  view.fromPage.fire({ type: 'ready' });
  return { conv, view };
}

describe('the conversation view and the keyboard', () => {
  it('shows a task started elsewhere without taking the focus, folded or not', async () => {
    const { conv, view } = made();
    await conv.show();
    assert.deepEqual(view.shows, [true], 'shown with the focus kept where it is');
    assert.equal(conv.visible(), true, 'seen as soon as it is asked for: a proposal then asks there alone');
    view.unfold(); // VS Code unfolds it
    view.fold();
    view.unfold(); // the person unfolds it again
    assert.equal(view.focuses(), 0, 'nothing moves the keyboard into the view');
    assert.ok(view.posted.some((m) => m.type === 'state'), 'it is drawn');
    assert.equal(conv.visible(), true);
    view.fold(); // the person folds it
    assert.equal(conv.visible(), false);
  });

  it('asks VS Code to make the view, if it has not, keeping the focus', async () => {
    stub.commands.executed.length = 0;
    const conv = new ConversationView(vscode.Uri.file('/ext'), () => ({}) as ViewState, () => undefined);
    await conv.show();
    assert.deepEqual(stub.commands.executed, [['agentls.conversation.focus', { preserveFocus: true }]]);
  });

  it('puts the keyboard in the prompt box when the person opens the view', async () => {
    const { conv, view } = made();
    await conv.reveal();
    assert.equal(view.focuses(), 1);
  });

  it('puts the keyboard in the prompt box of a view it made once its page is up', async () => {
    const conv = new ConversationView(vscode.Uri.file('/ext'), () => ({}) as ViewState, () => undefined);
    await conv.reveal(); // VS Code makes the view; its page is not up yet
    const view = new FakeView();
    conv.resolveWebviewView(view as unknown as vscode.WebviewView);
    view.fromPage.fire({ type: 'ready' });
    assert.equal(view.focuses(), 1);
  });
});
