// The commands and views of the extension, wired to each other: each
// concern's module made with what it needs of the others, and every
// command registered. extension.ts makes what VS Code gives (the output
// channels, the folders' agentls, the conversation view) and hands it here;
// the unit tests hand fakes, so they register exactly what the extension
// does. Where a command lives:
//
//   run.ts           Run Task…, Run Task on Engine…, Follow Up… (agent/run)
//   controls.ts      Stop, Add, Skip and Remove Subtask, Undo Task and Undo Subtask
//   approvals.ts     Show What Waits for You, Answer…, Run, Always Allow, Deny, Dismiss
//   proposals.ts     Accept, Reject, Review and Show Proposed Diff; Show Change
//   conversation.ts  the conversation view's requests, Open and New Conversation, Attach…
//   viewers.ts       Show Sessions, Show Trace for Line, Show MCP Servers, Show Engines
//   pickers.ts       Choose Model…, Test Connection, Choose Intent…, Choose Engine…
//   providerKeys.ts  Set and Clear Provider Key…
//   lifecycle.ts     the processes' start and restarts, Restart, Show Output
//   views.ts         the Tasks and Heat views, the status bar item, Refresh Neighbours
//
// agents.ts is what they share: the folders' agentls as the commands see
// them, and the one way a command sends a request.
import { Choices } from '../choices';
import { EditLog } from '../edits';
import { PendingStore } from '../pending';
import { Conversation } from '../views/conversationModel';
import { TaskStore } from '../views/taskModel';
import { Requests } from './agents';
import * as approvals from './approvals';
import { ConversationCommands, ConversationSurface } from './conversation';
import { TaskControls } from './controls';
import * as lifecycle from './lifecycle';
import { Pickers } from './pickers';
import * as proposals from './proposals';
import * as providerKeys from './providerKeys';
import { TaskRunner } from './run';
import { Viewers } from './viewers';
import { Views, ViewsDeps } from './views';

/** What the commands share, made by extension.ts (or a test). */
export interface Shared {
  agents: ViewsDeps['agents'];
  /** The agentls output channel. */
  output: { show(): void };
  tasks: TaskStore;
  pending: PendingStore;
  edits: EditLog;
  choices: Choices;
  conversation: Conversation;
  /** The answers to what waits (Inbox). */
  inbox: approvals.Answers;
  /** The provider keys, and their changes. */
  keys: providerKeys.Keys & { onDidChange(listener: () => void): { dispose(): void } };
  /** Where the prompt history is kept (the workspace's state). */
  history: { update(key: string, value: unknown): Thenable<void> };
  /** The conversation view (ConversationView). */
  view: ConversationSurface & { show(): Promise<void> };
}

export interface Wired {
  /** What the conversation view renders, and what it asks for. */
  conversation: ConversationCommands;
  /** Every command, view and subscription, for the extension's context. */
  disposables: { dispose(): void }[];
}

/** wire makes every concern's module and registers its commands. */
export function wire(s: Shared): Wired {
  const { agents, tasks, pending, choices, conversation, inbox, view } = s;
  const requests = new Requests(agents, s.output);
  // A module's calls into one made after it are closures, run only once
  // everything is made.
  const views: Views = new Views({
    agents,
    tasks,
    pending,
    conversationAgent: () => talk.agent(),
    refreshConversation: () => {
      view.refresh();
    },
  });
  const pickers = new Pickers(agents, requests, choices);
  const controls = new TaskControls(requests, tasks);
  const showConversation = (): void => {
    void view.show();
  };
  const runner: TaskRunner = new TaskRunner({
    requests,
    tasks,
    choices,
    conversation,
    showConversation,
    updateViews: () => {
      views.update();
    },
    selectIntent: (a) => pickers.selectIntent(a),
    selectEngine: (a) => pickers.selectEngine(a),
    pickEngine: (a, title) => pickers.pickEngine(a, title),
    openSession: (a, sessionId) => viewers.openSession(a, sessionId),
  });
  const viewers: Viewers = new Viewers({
    agents,
    requests,
    runOnEngine: (a, prompt, engine) => runner.run(a, prompt, undefined, undefined, engine),
    continueSession: (a, sessionId) => runner.continueSession(a, sessionId),
    showConversation,
  });
  const talk: ConversationCommands = new ConversationCommands({
    agents,
    requests,
    conversation,
    tasks,
    pending,
    choices,
    inbox,
    history: s.history,
    view,
    describeModel: (a) => pickers.describeModel(a),
    describeIntent: (a) => pickers.describeIntent(a),
    selectModel: (a) => pickers.selectModel(a),
    selectIntent: (a) => pickers.selectIntent(a),
    selectEngine: (a) => pickers.selectEngine(a),
    run: (a, prompt, sessionId, attachments) => runner.run(a, prompt, sessionId, attachments),
    stop: (taskId) => controls.stop(taskId),
    addSubtask: (arg, text) => controls.addSubtask(arg, text),
    subtaskControl: (arg, method, verb) => controls.subtaskControl(arg, method, verb),
  });
  return {
    conversation: talk,
    disposables: [
      ...views.register(),
      ...runner.register(),
      ...controls.register(),
      ...approvals.register({ pending, inbox }),
      ...proposals.register({ pending, inbox, tasks, edits: s.edits }),
      ...talk.register(),
      ...viewers.register(),
      ...pickers.register(),
      ...providerKeys.register(s.keys),
      ...lifecycle.register({ agents, tasks, output: s.output, onDidChangeKeys: (l) => s.keys.onDidChange(l) }),
    ],
  };
}
