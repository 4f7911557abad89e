// The conversation: what its view shows beside the tasks (folder, model,
// intent, engine, whether it takes attachments), what the view asks for
// (send, stop, skip, answer, attach, choose, start anew), and Open and New
// Conversation, Attach Selection, Attach File and Attach Image… from the
// palette and the editor's menu.
import * as vscode from 'vscode';
import { Choices } from '../choices';
import { folderNames, relativeTo } from '../folderPaths';
import { PendingStore } from '../pending';
import { Features, Methods, RunAttachment } from '../protocol';
import { Conversation, imageTypes, isImagePath, maxImageBytes, runAttachments, viewState } from '../views/conversationModel';
import { TaskStore } from '../views/taskModel';
import { FromView, ViewState } from '../webview/state';
import { Agent, AgentSet, Requests } from './agents';
import { Answers } from './approvals';

/** The part of the conversation view the commands drive (ConversationView). */
export interface ConversationSurface {
  /** Posts the state soon. */
  refresh(): void;
  /** Puts the keyboard in the prompt box. */
  focus(): void;
  /** Shows the view and focuses its prompt box. */
  reveal(): Promise<void>;
}

export interface ConversationDeps {
  agents: AgentSet;
  requests: Requests;
  conversation: Conversation;
  tasks: TaskStore;
  pending: PendingStore;
  choices: Choices;
  inbox: Pick<Answers, 'answer' | 'review' | 'diff'>;
  /** Where the prompt history is kept (the workspace's state). */
  history: { update(key: string, value: unknown): Thenable<void> };
  view: ConversationSurface;
  /** The words of the folder's model and intent (Pickers). */
  describeModel(a: Agent | undefined): string;
  describeIntent(a: Agent | undefined): string;
  /** The pickers the view's buttons open (Pickers). */
  selectModel(a: Agent | undefined): Promise<void>;
  selectIntent(a: Agent | undefined): Promise<void>;
  selectEngine(a: Agent | undefined): Promise<void>;
  /** Runs a task (TaskRunner.run). */
  run(a: Agent, prompt: string, sessionId: string | undefined, attachments: RunAttachment[]): Promise<unknown>;
  /** The task controls the view's buttons use (TaskControls). */
  stop(taskId: string): Promise<void>;
  addSubtask(arg: unknown, text: string): Promise<void>;
  subtaskControl(arg: unknown, method: string, verb: string): Promise<void>;
}

const noAttachments = 'agentls: this agentls takes no attachments with a prompt (it does not advertise them): name the file in the prompt';

export class ConversationCommands {
  private lastEditor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;

  constructor(private readonly d: ConversationDeps) {}

  /** agent is the folder the conversation is in: its tasks', else the first folder's. */
  agent(): Agent | undefined {
    return this.d.agents.get(this.d.conversation.folder) ?? this.d.agents.all()[0];
  }

  /** state is what the view renders. */
  state(): ViewState {
    const { conversation, tasks, pending, choices } = this.d;
    const a = this.agent();
    return viewState(conversation, tasks, pending, {
      folderName: a?.folder.name ?? '',
      multiRoot: this.d.agents.all().length > 1,
      model: this.d.describeModel(a),
      intent: this.d.describeIntent(a),
      folders: folderNames(),
      canAttach: a?.client.advertises(Features.attachments) ?? false,
      engine: a !== undefined ? choices.get(a.key).engine ?? '' : '',
    });
  }

  /** attach adds the active editor's file, or its selection, to the next prompt. */
  attach(what: 'file' | 'selection', editor = vscode.window.activeTextEditor ?? this.lastEditor): void {
    const { agents, conversation } = this.d;
    if (editor === undefined || editor.document.uri.scheme !== 'file') {
      void vscode.window.showInformationMessage('agentls: open a file of the workspace to attach it');
      return;
    }
    const a = agents.of(editor.document.uri);
    if (a === undefined) {
      void vscode.window.showInformationMessage('agentls: that file is outside the workspace folders');
      return;
    }
    const into = conversation.taskIds.length === 0 ? a : agents.get(conversation.folder) ?? a;
    if (!into.client.advertises(Features.attachments)) {
      void vscode.window.showInformationMessage(noAttachments);
      return;
    }
    if (conversation.taskIds.length === 0) {
      conversation.folder = a.key;
    }
    const base = agents.get(conversation.folder)?.folder.uri ?? a.folder.uri;
    const path = relativeTo(base, editor.document.uri);
    const sel = editor.selection;
    if (what === 'selection' && !sel.isEmpty) {
      const endLine = sel.end.character === 0 && sel.end.line > sel.start.line ? sel.end.line : sel.end.line + 1;
      conversation.attach({ path, startLine: sel.start.line + 1, endLine });
    } else {
      conversation.attach({ path });
    }
    this.d.view.refresh();
  }

  /** attachInto is the folder agent that takes what is attached next, if it takes attachments. */
  private attachInto(a?: Agent): Agent | undefined {
    const { agents, conversation } = this.d;
    const into = conversation.taskIds.length === 0 ? a ?? this.agent() : agents.get(conversation.folder) ?? a;
    if (into === undefined || !into.client.advertises(Features.attachments)) {
      void vscode.window.showInformationMessage(noAttachments);
      return undefined;
    }
    if (conversation.taskIds.length === 0) {
      conversation.folder = into.key;
    }
    return into;
  }

  /** attachImage offers the images of the conversation's folder. */
  async attachImage(): Promise<void> {
    const into = this.attachInto();
    if (into === undefined) {
      return;
    }
    const glob = `**/*.{${Object.keys(imageTypes).join(',')}}`;
    const found = await vscode.workspace.findFiles(new vscode.RelativePattern(into.folder, glob), '**/{node_modules,.git}/**', 500);
    const paths = found.map((u) => relativeTo(into.folder.uri, u)).filter(isImagePath).sort();
    if (paths.length === 0) {
      void vscode.window.showInformationMessage(`agentls: ${into.folder.name} has no image (png, jpeg, gif, webp) to attach; paste one into the prompt box instead`);
      return;
    }
    const p = await vscode.window.showQuickPick(paths.map((x) => ({ label: x })), { title: 'agentls: Attach which image?', placeHolder: 'An image of the workspace goes along with the next prompt' });
    if (p !== undefined) {
      this.d.conversation.attach({ path: p.label, image: {} });
      this.d.view.refresh();
    }
  }

  /** attachPasted takes an image pasted into the prompt box. */
  attachPasted(data: string, mimeType: string): void {
    if (!Object.values(imageTypes).includes(mimeType)) {
      void vscode.window.showWarningMessage(`agentls: a pasted ${mimeType} cannot go along: agentls takes png, jpeg, gif and webp images`);
      return;
    }
    // base64: four characters for three bytes.
    if (Math.floor((data.length * 3) / 4) > maxImageBytes) {
      void vscode.window.showWarningMessage(`agentls: the pasted image is over ${maxImageBytes / (1024 * 1024)} MiB, more than agentls takes`);
      return;
    }
    if (this.attachInto() === undefined) {
      return;
    }
    this.d.conversation.attach({ path: this.d.conversation.pastedName(mimeType), image: { data, mimeType } });
    this.d.view.refresh();
  }

  /** onViewMessage does what the view asks. */
  async onViewMessage(m: FromView): Promise<void> {
    const { conversation, view } = this.d;
    switch (m.type) {
      case 'send': {
        const text = m.text.trim();
        if (text === '') {
          return;
        }
        conversation.remember(text);
        void this.d.history.update('agentls.history', conversation.history);
        const running = conversation.running(this.d.tasks);
        if (running !== undefined) {
          // A subtask takes no attachments: they wait for the next task.
          await this.d.addSubtask({ kind: 'task', taskId: running.taskId }, text);
          return;
        }
        const a = this.d.agents.get(conversation.folder) ?? await this.d.requests.pick('Send');
        if (a === undefined) {
          return;
        }
        const attached = a.client.advertises(Features.attachments) ? runAttachments(conversation.attachments) : [];
        conversation.attachments = [];
        view.refresh();
        await this.d.run(a, text, conversation.folder === a.key ? conversation.sessionId(this.d.tasks) : undefined, attached);
        return;
      }
      case 'stop':
        await this.d.stop(m.taskId);
        return;
      case 'skip':
        await this.d.subtaskControl({ kind: 'subtask', taskId: m.taskId, subtaskId: m.subtaskId }, Methods.skipSubtask, 'skip');
        return;
      case 'answer':
        this.d.inbox.answer(m.id, m.value);
        return;
      case 'review':
        this.d.inbox.review(m.id);
        return;
      case 'diff':
        await this.d.inbox.diff(m.diffId);
        return;
      case 'attach':
        if (m.what === 'image') {
          await this.attachImage();
        } else {
          this.attach(m.what);
        }
        return;
      case 'paste':
        this.attachPasted(m.data, m.mimeType);
        return;
      case 'engine':
        await this.d.selectEngine(this.agent());
        return;
      case 'detach':
        conversation.detach(m.id);
        view.refresh();
        return;
      case 'model':
        await this.d.selectModel(this.agent());
        return;
      case 'intent':
        await this.d.selectIntent(this.agent());
        return;
      case 'new': {
        const a = await this.d.requests.pick('New Conversation');
        if (a !== undefined) {
          conversation.reset(a.key);
          conversation.attachments = [];
          view.refresh();
          view.focus();
        }
        return;
      }
      case 'ready':
        return;
    }
  }

  /**
   * register adds the conversation's commands, follows the active editor
   * for Attach, and redraws the view when what it names beside the tasks
   * (the chosen model, intent and engine, the settings) changes.
   */
  register(): { dispose(): void }[] {
    const view = this.d.view;
    const refresh = (): void => {
      view.refresh();
    };
    return [
      this.d.choices.onDidChange(refresh),
      vscode.workspace.onDidChangeConfiguration(refresh),
      vscode.window.onDidChangeActiveTextEditor((e) => {
        if (e !== undefined) {
          this.lastEditor = e;
        }
      }),
      vscode.commands.registerCommand('agentls.openConversation', () => view.reveal()),
      vscode.commands.registerCommand('agentls.newConversation', () => this.onViewMessage({ type: 'new' })),
      vscode.commands.registerCommand('agentls.attachSelection', () => {
        this.attach('selection');
        return view.reveal();
      }),
      vscode.commands.registerCommand('agentls.attachFile', () => {
        this.attach('file');
        return view.reveal();
      }),
      vscode.commands.registerCommand('agentls.attachImage', async () => {
        await this.attachImage();
        await view.reveal();
      }),
    ];
  }
}
