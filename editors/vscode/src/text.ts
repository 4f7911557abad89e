// What agentls says, as the person reads it in VS Code: notifications and
// tree rows show plain text (no Markdown backticks, paths relative to the
// workspace folder), and edits are computed over a document's text the way
// an LSP client applies them.

/** A workspace folder as messages name it: its path on disk and its name. */
export interface FolderName {
  /** Absolute path, / separators (a Windows drive letter as written). */
  path: string;
  name: string;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * relativePaths writes the absolute paths of workspace folders relative to
 * their folder: `/home/me/project/main.go` becomes `main.go`, the folder
 * itself its name. A longer folder path is tried first, so a nested folder
 * wins over its parent. Paths outside every folder are left as they are.
 */
export function relativePaths(text: string, folders: readonly FolderName[]): string {
  const sorted = [...folders].filter((f) => f.path !== '' && f.path !== '/').sort((a, b) => b.path.length - a.path.length);
  let out = text;
  for (const f of sorted) {
    const root = f.path.replace(/[\\/]+$/, '');
    // The folder followed by a separator and a path, or by the end of a word.
    // A sentence's full stop after a path is not part of it.
    const re = new RegExp(`${escapeRegExp(root)}(?:[\\\\/]([^\\s\`'",;:)\\]]*?))?(?=$|[\\s\`'",;:)\\]]|[.!?](?:$|\\s))`, 'g');
    out = out.replace(re, (_m, rest: string | undefined) => {
      const rel = (rest ?? '').replace(/\\/g, '/').replace(/\/+$/, '');
      return rel === '' ? f.name : rel;
    });
  }
  return out;
}

/**
 * settingWords names agentls's settings as the person knows them in VS
 * Code. agentls names each by its key in initializationOptions (what every
 * editor sends), and a task's own model by the request that gave it; here
 * they are settings of the Settings editor (agentls.model), and the model
 * chosen for the next tasks in the model picker or the conversation view.
 */
export function settingWords(text: string): string {
  return text
    .replace(/initializationOptions\.model \(editor setting "model", /g, 'the agentls.model setting (')
    .replace(/\binitializationOptions\.([A-Za-z]\w*)/g, 'the agentls.$1 setting')
    .replace(/\bagent\/(?:run|checkModel) model\b/g, 'the model chosen for the next tasks');
}

/**
 * plainText is a message of agentls as plain text: Markdown code spans and
 * fences lose their backticks, emphasis its stars, absolute paths of the
 * workspace folders become relative, and settings are named as VS Code
 * names them (settingWords). For notifications, tree rows and the
 * status bar, which show Markdown literally.
 */
export function plainText(text: string, folders: readonly FolderName[] = []): string {
  let out = relativePaths(settingWords(text), folders);
  // Fenced blocks: keep their content.
  out = out.replace(/^(`{3,}|~{3,})[^\n]*\n([\s\S]*?)\n?\1[ \t]*$/gm, '$2');
  // Code spans: `code`, ``co`de``.
  out = out.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_m, _ticks: string, code: string) => code.trim() === '' ? code : code.replace(/^ (.*) $/s, '$1'));
  // Strong and emphasis written with stars (underscores are left: snake_case).
  out = out.replace(/\*\*([^*\n]+)\*\*/g, '$1').replace(/(^|[\s(])\*([^*\s][^*\n]*?)\*(?=$|[\s).,;:!?])/g, '$1$2');
  return out;
}

/** A position of LSP: 0-based line, character in UTF-16 code units. */
export interface Position {
  line: number;
  character: number;
}

export interface TextEdit {
  range: { start: Position; end: Position };
  newText: string;
}

/** lineStarts lists the offset of each line of text (LSP lines: \n, \r\n or \r end one). */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 13 /* \r */) {
      if (text.charCodeAt(i + 1) === 10) {
        i++;
      }
      starts.push(i + 1);
    } else if (c === 10 /* \n */) {
      starts.push(i + 1);
    }
  }
  return starts;
}

/** An edit that cannot be applied to the text it was made for. */
export class EditError extends Error {}

/**
 * applyTextEdits applies LSP text edits to text as an editor does: every
 * range refers to the text before any edit; ranges must not overlap. A
 * position past the end of its line is clamped to the line's end (before its
 * line break), one past the last line to the end of the text, as VS Code
 * does; JavaScript strings are UTF-16, so characters are code units.
 */
export function applyTextEdits(text: string, edits: readonly TextEdit[]): string {
  const starts = lineStarts(text);
  const offset = (p: Position): number => {
    if (p.line < 0 || p.character < 0) {
      throw new EditError(`position ${p.line}:${p.character} is negative`);
    }
    if (p.line >= starts.length) {
      return text.length;
    }
    const start = starts[p.line] ?? 0;
    let end = p.line + 1 < starts.length ? (starts[p.line + 1] ?? text.length) : text.length;
    // The line's own text ends before its break.
    if (end > start && text.charCodeAt(end - 1) === 10) {
      end--;
    }
    if (end > start && text.charCodeAt(end - 1) === 13) {
      end--;
    }
    return Math.min(start + p.character, end);
  };
  const spans = edits.map((e, i) => ({ start: offset(e.range.start), end: offset(e.range.end), text: e.newText, i }));
  for (const s of spans) {
    if (s.end < s.start) {
      throw new EditError(`edit ${s.i + 1} ends before it starts`);
    }
  }
  // Stable: edits inserting at one position keep their order.
  spans.sort((a, b) => a.start - b.start || a.end - b.end || a.i - b.i);
  let out = '';
  let at = 0;
  for (const s of spans) {
    if (s.start < at) {
      throw new EditError(`edit ${s.i + 1} overlaps another edit`);
    }
    out += text.slice(at, s.start) + s.text;
    at = s.end;
  }
  return out + text.slice(at);
}
