// A small Markdown renderer for what models write in the conversation view:
// paragraphs, headings, lists, block quotes, fenced code, code spans, bold,
// italics and links (shown as text, never followed). Everything is escaped
// first: the only HTML in the result is what this file writes. No DOM, so
// it runs in the webview and in the unit tests alike.

/** escapeHtml makes text safe to put between tags and in attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/** group is a regular expression's group, '' when it did not take part in the match. */
function group(m: RegExpExecArray, i: number): string {
  return m.at(i) ?? '';
}

/** inline renders one line's inline Markdown over escaped text. */
export function inline(text: string): string {
  // Code spans first: nothing inside them is Markdown.
  const parts: string[] = [];
  let rest = text;
  for (;;) {
    const m = /(`+)([\s\S]*?[^`])\1(?!`)/.exec(rest);
    if (m === null) {
      parts.push(emphasis(escapeHtml(rest)));
      break;
    }
    parts.push(emphasis(escapeHtml(rest.slice(0, m.index))));
    let code = group(m, 2);
    if (code.length > 2 && code.startsWith(' ') && code.endsWith(' ')) {
      code = code.slice(1, -1);
    }
    parts.push(`<code>${escapeHtml(code)}</code>`);
    rest = rest.slice(m.index + m[0].length);
  }
  return parts.join('');
}

/** emphasis renders bold, italics and links in escaped text. */
function emphasis(s: string): string {
  return s
    .replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g, (_m, label: string, url: string) => `<span class="link" title="${url}">${label}</span>`)
    .replace(/\*\*([^*\n]+?)\*\*/g, '<strong>$1</strong>')
    .replace(/__([^_\n]+?)__/g, '<strong>$1</strong>')
    .replace(/(^|[\s(])\*([^*\s][^*\n]*?)\*(?=$|[\s).,;:!?])/g, '$1<em>$2</em>')
    .replace(/(^|[\s(])_([^_\s][^_\n]*?)_(?=$|[\s).,;:!?])/g, '$1<em>$2</em>');
}

/** markdown renders a whole text as HTML blocks. */
export function markdown(text: string): string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = [];
  let para: string[] = [];
  let list: { ordered: boolean; items: string[] } | undefined;
  const flushPara = (): void => {
    if (para.length > 0) {
      out.push(`<p>${para.map(inline).join('<br>')}</p>`);
      para = [];
    }
  };
  const flushList = (): void => {
    if (list !== undefined) {
      const tag = list.ordered ? 'ol' : 'ul';
      out.push(`<${tag}>${list.items.map((i) => `<li>${inline(i)}</li>`).join('')}</${tag}>`);
      list = undefined;
    }
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = /^\s*(`{3,}|~{3,})\s*([\w+#.-]*)\s*$/.exec(line);
    if (fence !== null) {
      flushPara();
      flushList();
      const close = group(fence, 1);
      const lang = group(fence, 2);
      const body: string[] = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(close)) {
        body.push(lines[i]);
        i++;
      }
      out.push(`<pre${lang !== '' ? ` data-lang="${escapeHtml(lang)}"` : ''}><code>${escapeHtml(body.join('\n'))}</code></pre>`);
      continue;
    }
    if (line.trim() === '') {
      flushPara();
      flushList();
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading !== null) {
      flushPara();
      flushList();
      // Headings of a chat message are small: h4 and below.
      const level = Math.min(6, 3 + group(heading, 1).length);
      out.push(`<h${level}>${inline(group(heading, 2))}</h${level}>`);
      continue;
    }
    const item = /^\s*(?:([-*+])|(\d+)[.)])\s+(.*)$/.exec(line);
    if (item !== null) {
      flushPara();
      const ordered = group(item, 2) !== '';
      if (list !== undefined && list.ordered !== ordered) {
        flushList();
      }
      list ??= { ordered, items: [] };
      list.items.push(group(item, 3));
      continue;
    }
    const quote = /^\s*>\s?(.*)$/.exec(line);
    if (quote !== null) {
      flushPara();
      flushList();
      out.push(`<blockquote>${inline(group(quote, 1))}</blockquote>`);
      continue;
    }
    if (list !== undefined && /^\s{2,}\S/.test(line)) {
      // A list item's continuation line.
      const items = list.items;
      items[items.length - 1] = `${items[items.length - 1] ?? ''} ${line.trim()}`;
      continue;
    }
    flushList();
    para.push(line);
  }
  flushPara();
  flushList();
  return out.join('');
}
