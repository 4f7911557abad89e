// The prompt of "Run Task…": what the person typed, and the selection of the
// active editor as context when there is one.

export interface SelectionContext {
  /** Workspace-relative path with / separators (or the document's name). */
  path: string;
  languageId: string;
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
  text: string;
}

/** The most selected text sent along; a larger selection is cut with a note. */
export const maxSelectionChars = 20000;

export function buildPrompt(request: string, sel: SelectionContext | undefined): string {
  const req = request.trim();
  if (sel === undefined || sel.text.trim() === '') {
    return req;
  }
  let text = sel.text;
  let note = '';
  if (text.length > maxSelectionChars) {
    text = text.slice(0, maxSelectionChars);
    note = `\n(selection cut at ${maxSelectionChars} characters)`;
  }
  const lines = sel.startLine === sel.endLine ? `line ${sel.startLine}` : `lines ${sel.startLine}-${sel.endLine}`;
  // A fence longer than any run of backticks in the text keeps it intact.
  const longest = Math.max(2, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${req}\n\nSelected in ${sel.path}, ${lines}:\n${fence}${sel.languageId}\n${text}${text.endsWith('\n') ? '' : '\n'}${fence}${note}`;
}
