// The conversation view: a webview beside the Tasks view where the person
// talks to agentls. Its page loads one script and one style sheet of the
// extension, under a Content-Security-Policy that allows nothing else (a
// nonce for the script, no remote resource, no inline style or handler).
// The state it renders comes from the stores, posted at most every 50 ms.
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { icon } from '../webview/render';
import { FromView, isFromView, ToView, ViewState } from '../webview/state';

export const conversationViewId = 'agentls.conversation';

/** contentSecurityPolicy allows the view's own script (by nonce) and styles, nothing remote. */
export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `style-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
    `img-src ${cspSource} data:`,
    `font-src ${cspSource}`,
  ].join('; ');
}

/** conversationHtml is the view's page. */
export function conversationHtml(o: { cspSource: string; nonce: string; script: string; style: string }): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy(o.cspSource, o.nonce)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${o.style}">
<title>agentls</title>
</head>
<body>
<div id="header" class="header"></div>
<div id="log" class="log" role="log" aria-live="polite"></div>
<div class="composer">
<div id="attachments" class="attachments"></div>
<textarea id="prompt" rows="2" aria-label="Prompt for agentls"></textarea>
<div class="composer-actions">
<button type="button" class="icon" data-attach="file" hidden title="Attach file: the active editor's file goes along with the prompt" aria-label="Attach file">${icon('file')}</button>
<button type="button" class="icon" data-attach="selection" hidden title="Attach selection: the active editor's selection goes along with the prompt" aria-label="Attach selection">${icon('selection')}</button>
<button type="button" class="icon" data-attach="image" hidden title="Attach image: an image of the workspace goes along with the prompt (or paste one into the box)" aria-label="Attach image">${icon('image')}</button>
<span class="spacer"></span>
<button type="button" id="send" class="primary" title="Send (Enter)">${icon('send')}<span class="label">Send</span></button>
</div>
<div id="hint" class="hint"></div>
</div>
<script nonce="${o.nonce}" src="${o.script}"></script>
</body>
</html>`;
}

export class ConversationView implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** reveal made the view: its prompt box takes the keyboard once its page is up. */
  private focusWhenReady = false;
  /**
   * show asked VS Code to show the view, and VS Code has not said yet that
   * it did: the view counts as seen meanwhile (a proposal that comes at
   * once asks there, not in a notification too).
   */
  private showing = false;
  private readonly subs: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly state: () => ViewState,
    private readonly handle: (m: FromView) => void,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.showing = false;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist, media] };
    view.webview.html = conversationHtml({
      cspSource: view.webview.cspSource,
      nonce: randomBytes(18).toString('base64'),
      script: view.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
      style: view.webview.asWebviewUri(vscode.Uri.joinPath(media, 'conversation.css')).toString(),
    });
    this.subs.push(
      view.webview.onDidReceiveMessage((m: unknown) => {
        if (isFromView(m)) {
          if (m.type === 'ready') {
            this.postNow();
            if (this.focusWhenReady) {
              this.focusWhenReady = false;
              this.focus();
            }
          } else {
            this.handle(m);
          }
        }
      }),
      // Shown (unfolded, its container opened) it redraws, and leaves the
      // keyboard where it is: only reveal, the person's own asking for the
      // view, moves it.
      view.onDidChangeVisibility(() => {
        this.showing = false;
        if (view.visible) {
          this.postNow();
        }
      }),
      view.onDidDispose(() => {
        this.view = undefined;
      }),
    );
  }

  private post(m: ToView): void {
    void this.view?.webview.postMessage(m);
  }

  /** refresh posts the state soon: many changes in a burst (a stream) post once. */
  refresh(): void {
    if (this.view === undefined || this.timer !== undefined) {
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.postNow();
    }, 50);
  }

  private postNow(): void {
    if (this.view !== undefined) {
      this.post({ type: 'state', state: this.state() });
    }
  }

  /** focus puts the keyboard in the prompt box. */
  focus(): void {
    this.post({ type: 'focus' });
  }

  /**
   * visible says whether the person sees the view (made, unfolded, its
   * container open), or is about to: show asked for it.
   */
  visible(): boolean {
    return this.view?.visible === true || this.showing;
  }

  /**
   * show brings the view forward (unfolded, its container opened, made if
   * VS Code had not made it yet) and leaves the keyboard where it is: a
   * task started from the palette, a menu or a notification never takes
   * the focus from the editor the person types in.
   */
  async show(): Promise<void> {
    if (this.view?.visible !== true) {
      this.showing = true;
    }
    if (this.view !== undefined) {
      this.view.show(true);
      this.postNow();
      return;
    }
    await vscode.commands.executeCommand(`${conversationViewId}.focus`, { preserveFocus: true });
    this.postNow();
  }

  /** reveal shows the view and puts the keyboard in its prompt box: the person asked for it. */
  async reveal(): Promise<void> {
    this.focusWhenReady = this.view === undefined;
    await vscode.commands.executeCommand(`${conversationViewId}.focus`);
    this.postNow();
    this.focus();
  }

  dispose(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
    }
    for (const s of this.subs.splice(0)) {
      s.dispose();
    }
  }
}
