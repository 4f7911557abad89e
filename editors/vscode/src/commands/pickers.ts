// What the next tasks of a folder run with: Choose Model… (and Test
// Connection), Choose Intent… and Choose Engine…, kept in the workspace's
// state by Choices; and the words the conversation view shows for them.
import * as vscode from 'vscode';
import { checkMessage, Choices, engineItems, intentItems, ModelItem, modelItems } from '../choices';
import { folderNames } from '../folderPaths';
import { CheckModelResult, EnginesResult, IntentsResult, Methods, ModelsResult } from '../protocol';
import { plainText } from '../text';
import { Agent, AgentSet, Requests } from './agents';

/** modelName is a model as the view names it: a scripted model by its file's name. */
export function modelName(model: string): string {
  const m = /^script:(.*[\\/])?([^\\/]+)$/.exec(model);
  return m !== null ? `script:${m[2]}` : model;
}

export class Pickers {
  constructor(
    private readonly agents: AgentSet,
    private readonly requests: Requests,
    private readonly choices: Choices,
  ) {}

  /** In a multi-root workspace, the words that name the folder. */
  private inFolder(a: Agent): string {
    return this.agents.all().length > 1 ? ` in ${a.folder.name}` : '';
  }

  /** describeModel names the model of a folder's next tasks: the chosen one, else the setting's. */
  describeModel(a: Agent | undefined): string {
    if (a === undefined) {
      return 'none';
    }
    const chosen = this.choices.get(a.key).model;
    if (chosen !== undefined) {
      return modelName(chosen);
    }
    const setting = a.client.config().get<string>('model') ?? '';
    return setting !== '' ? modelName(setting) : 'configured';
  }

  /** describeIntent names the intent chosen for a folder's next tasks, '' for none. */
  describeIntent(a: Agent | undefined): string {
    const c = a !== undefined ? this.choices.get(a.key) : {};
    return c.intentId !== undefined ? `${c.intentId}${c.intentName !== undefined ? ` ${c.intentName}` : ''}` : '';
  }

  /** checkModel tests the model of the next tasks, offering the closest names of an unknown one. */
  async checkModel(a?: Agent): Promise<void> {
    const agent = a ?? await this.requests.pick('Test Connection');
    if (agent === undefined) {
      return;
    }
    const model = this.choices.get(agent.key).model;
    const res = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `agentls: testing ${model ?? 'the configured model'}…` },
      () => this.requests.request<CheckModelResult>(agent, Methods.checkModel, model !== undefined ? { model } : {}, 'cannot test the model'));
    if (res === undefined) {
      return;
    }
    if (res.ok) {
      void vscode.window.showInformationMessage(checkMessage(res));
      return;
    }
    const closest = res.closest ?? [];
    void vscode.window.showWarningMessage(checkMessage(res), ...closest.map((c) => `Use ${c}`)).then(async (p) => {
      if (p !== undefined) {
        await this.choices.set(agent.key, { model: p.slice('Use '.length) });
        void vscode.window.showInformationMessage(`agentls: the next tasks in ${agent.folder.name} run with ${p.slice('Use '.length)}`);
      }
    });
  }

  /** selectModel offers agent/models, the configured model and a test of the connection. */
  async selectModel(a?: Agent): Promise<void> {
    const agent = a ?? await this.requests.pick('Choose Model');
    if (agent === undefined) {
      return;
    }
    const chosen = this.choices.get(agent.key).model;
    const qp = vscode.window.createQuickPick<vscode.QuickPickItem & { action?: ModelItem['action'] }>();
    qp.title = `agentls: the model of the next tasks${this.inFolder(agent)}`;
    qp.placeholder = 'Asking the providers for their models…';
    qp.busy = true;
    qp.matchOnDescription = true;
    qp.show();
    const res = await this.requests.request<ModelsResult>(agent, Methods.models, {}, 'cannot list the models');
    if (res === undefined) {
      qp.dispose();
      return;
    }
    qp.items = modelItems(res, chosen).map((i) => ({ ...i, kind: i.kind === 'separator' ? vscode.QuickPickItemKind.Separator : vscode.QuickPickItemKind.Default }));
    qp.busy = false;
    qp.placeholder = 'Pick the model of the next tasks (the agentls.model setting is left as it is)';
    const picked = await new Promise<ModelItem['action'] | undefined>((resolve) => {
      qp.onDidAccept(() => {
        resolve(qp.selectedItems[0]?.action);
        qp.hide();
      });
      qp.onDidHide(() => {
        resolve(undefined);
        qp.dispose();
      });
    });
    switch (picked?.type) {
      case 'test':
        await this.checkModel(agent);
        break;
      case 'default':
        await this.choices.set(agent.key, { model: undefined });
        void vscode.window.showInformationMessage(`agentls: the next tasks run with the configured model${res.current !== '' ? ` (${res.current})` : ''}`);
        break;
      case 'model':
        await this.choices.set(agent.key, { model: picked.id });
        void vscode.window.showInformationMessage(`agentls: the next tasks${this.inFolder(agent)} run with ${picked.id}`, 'Test Connection').then((p) => {
          if (p !== undefined) {
            void this.checkModel(agent);
          }
        });
        break;
      case 'problem':
        void vscode.window.showWarningMessage(`agentls: ${picked.message}`);
        break;
      default:
        break;
    }
  }

  /** selectIntent offers the intents of .orchestration/active_intents.yaml that can be chosen. */
  async selectIntent(a?: Agent): Promise<void> {
    const agent = a ?? await this.requests.pick('Choose Intent');
    if (agent === undefined) {
      return;
    }
    const res = await this.requests.request<IntentsResult>(agent, Methods.intents, {}, 'cannot list the intents');
    if (res === undefined) {
      return;
    }
    if (res.error !== undefined && res.error !== '') {
      void vscode.window.showErrorMessage(`agentls: ${plainText(res.error, folderNames())}`);
      return;
    }
    const items = intentItems(res, this.choices.get(agent.key).intentId);
    if (items.length === 1) {
      void vscode.window.showInformationMessage((res.intents ?? []).length > 0
        ? 'agentls: every intent of .orchestration/active_intents.yaml is COMPLETED: none can be chosen'
        : 'agentls: this folder has no intents (.orchestration/active_intents.yaml)');
      return;
    }
    const p = await vscode.window.showQuickPick(items, { title: 'agentls: the intent the next tasks work under', matchOnDetail: true });
    if (p === undefined) {
      return;
    }
    await this.choices.set(agent.key, p.intent !== undefined ? { intentId: p.intent.id, intentName: p.intent.name } : { intentId: undefined, intentName: undefined });
  }

  /**
   * pickEngine asks which engine to run on, from agent/engines: '' is the
   * plan's choice, undefined nothing picked. One that cannot be used is
   * shown with its reason and cannot be picked.
   */
  async pickEngine(agent: Agent, title: string): Promise<string | undefined> {
    const res = await this.requests.request<EnginesResult>(agent, Methods.engines, {}, 'cannot list the engines');
    if (res === undefined) {
      return undefined;
    }
    for (;;) {
      const p = await vscode.window.showQuickPick(engineItems(res, this.choices.get(agent.key).engine), { title, matchOnDetail: true });
      if (p === undefined) {
        return undefined;
      }
      if (p.engine !== undefined) {
        return p.engine;
      }
      void vscode.window.showWarningMessage(`agentls: ${plainText(p.problem ?? 'that engine cannot be used', folderNames())}`);
    }
  }

  /** selectEngine chooses the engine of the next tasks. */
  async selectEngine(a?: Agent): Promise<void> {
    const agent = a ?? await this.requests.pick('Choose Engine');
    if (agent === undefined) {
      return;
    }
    const e = await this.pickEngine(agent, `agentls: the engine of the next tasks${this.inFolder(agent)}`);
    if (e !== undefined) {
      await this.choices.set(agent.key, { engine: e !== '' ? e : undefined });
    }
  }

  /** register adds Choose Model…, Test Connection, Choose Intent… and Choose Engine…. */
  register(): { dispose(): void }[] {
    return [
      vscode.commands.registerCommand('agentls.selectModel', () => this.selectModel()),
      vscode.commands.registerCommand('agentls.checkModel', () => this.checkModel()),
      vscode.commands.registerCommand('agentls.selectIntent', () => this.selectIntent()),
      vscode.commands.registerCommand('agentls.selectEngine', () => this.selectEngine()),
    ];
  }
}
