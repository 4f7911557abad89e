package intents

import (
	"strings"
	"unicode/utf8"
)

// Context returns the <intent_context> block select_intent gives the model:
// the intent's name, status, owned_scope, constraints and acceptance
// criteria. Every value is escaped; characters XML cannot carry are dropped.
func (in Intent) Context() string {
	var b strings.Builder
	b.WriteString(`<intent_context intent_id="`)
	escape(&b, in.ID, true)
	b.WriteString("\">\n")
	elem(&b, "  ", "name", in.Name)
	if in.Status != "" {
		elem(&b, "  ", "status", in.Status)
	}
	list(&b, "owned_scope", "pattern", in.OwnedScope)
	list(&b, "constraints", "constraint", in.Constraints)
	list(&b, "acceptance_criteria", "criterion", in.AcceptanceCriteria)
	b.WriteString("</intent_context>")
	return b.String()
}

func list(b *strings.Builder, outer, inner string, items []string) {
	if len(items) == 0 {
		b.WriteString("  <" + outer + "/>\n")
		return
	}
	b.WriteString("  <" + outer + ">\n")
	for _, it := range items {
		elem(b, "    ", inner, it)
	}
	b.WriteString("  </" + outer + ">\n")
}

func elem(b *strings.Builder, indent, name, text string) {
	b.WriteString(indent + "<" + name + ">")
	escape(b, text, false)
	b.WriteString("</" + name + ">\n")
}

// escape writes s as XML character data (attr: as a double-quoted attribute
// value). Characters outside XML 1.0's Char production are dropped.
func escape(b *strings.Builder, s string, attr bool) {
	for i, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"' && attr:
			b.WriteString("&quot;")
		case r == '\n' && attr:
			b.WriteString("&#xA;")
		case r == '\t' && attr:
			b.WriteString("&#x9;")
		case r == '\r':
			b.WriteString("&#xD;") // a raw CR would be normalised away by a parser
		case r == utf8.RuneError && isInvalid(s[i:]):
		case !xmlChar(r):
		default:
			b.WriteRune(r)
		}
	}
}

func isInvalid(s string) bool {
	_, size := utf8.DecodeRuneInString(s)
	return size <= 1
}

func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		(r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
}
