package docs_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// This file reads the example exchanges of a markdown file and compares
// messages with the placeholders PROTOCOL.md describes ("Reading the
// examples"). protocol_test.go replays them against the server.

// exchangeFence is the info string of a fenced block that is an example
// exchange.
const exchangeFence = "exchange"

// fileFence begins the info string of a fenced block that is a file of the
// example's workspace: "file /home/me/…". It is written there before the
// next exchange runs.
const fileFence = "file "

// ellipsis is the placeholder character.
const ellipsis = "…"

// exchange is one example exchange: a fenced ```exchange block.
type exchange struct {
	heading string // the nearest heading above the block
	line    int    // the line of the opening fence
	steps   []step
	elided  bool // the block has a "…" line: agentls may send messages it does not show
	files   []exampleFile
}

// exampleFile is a ```file block: a file the exchange after it finds in
// the example's workspace.
type exampleFile struct {
	line int    // the line of its opening fence
	path string // absolute, under exampleHome
	text string
}

func (ex *exchange) name() string { return fmt.Sprintf("%s (line %d)", ex.heading, ex.line) }

// startsWithInitialize reports whether the exchange sends initialize first.
func (ex *exchange) startsWithInitialize() bool {
	for _, s := range ex.steps {
		if s.send {
			return s.msg != nil && s.msg.method == "initialize"
		}
	}
	return false
}

// step is one message of an exchange: → (sent to agentls) or ← (expected
// from it).
type step struct {
	line int    // line of its arrow in the markdown file
	send bool   // → rather than ←
	text string // the message as written, continuation lines joined by "\n"
	// frame is the message's bytes when it is written as a whole frame
	// ("Content-Length: …\r\n" lines, then the body); nil for a JSON body.
	frame []byte
	// msg is the body parsed with its placeholders; nil for a → body that
	// is not JSON (sent as written, to show a parse error).
	msg *message
}

func (s *step) arrow() string {
	if s.send {
		return "→"
	}
	return "←"
}

// message is a JSON-RPC message as written in an example.
type message struct {
	id     string // the id's JSON, compacted; "" when absent
	method string
	body   any // decoded with placeholders (see decodeWithPlaceholders)
}

// isReply reports whether the message is a reply (no method).
func (m *message) isReply() bool { return m.method == "" }

// readExchanges returns every ```exchange block of a markdown file, and an
// error for a fenced block that holds → or ← lines without being one, or
// an exchange that cannot be read.
func readExchanges(name string, data []byte) ([]*exchange, error) {
	var (
		out     []*exchange
		heading string
		errs    []error
		files   []exampleFile // ```file blocks waiting for their exchange
	)
	orphans := func() {
		for _, f := range files {
			errs = append(errs, fmt.Errorf("%s:%d: a ```file block must come before the exchange that uses it, under the same heading", name, f.line))
		}
		files = nil
	}
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.HasPrefix(line, "#") {
			orphans()
			heading = strings.TrimSpace(strings.TrimLeft(line, "#"))
			continue
		}
		if !strings.HasPrefix(line, "```") {
			continue
		}
		info := strings.TrimSpace(strings.TrimPrefix(line, "```"))
		start := i
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			body = append(body, lines[i])
		}
		if path, ok := strings.CutPrefix(info, fileFence); ok {
			f, err := parseFile(name, start+1, strings.TrimSpace(path), body)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			files = append(files, f)
			continue
		}
		if info != exchangeFence {
			for j, l := range body {
				if strings.HasPrefix(l, "→") || strings.HasPrefix(l, "←") {
					errs = append(errs, fmt.Errorf("%s:%d: a block with → and ← lines must be fenced as ```%s, so that it is replayed", name, start+2+j, exchangeFence))
					break
				}
			}
			continue
		}
		ex, err := parseExchange(name, heading, start+1, body)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ex.files, files = files, nil
		out = append(out, ex)
	}
	orphans()
	return out, errors.Join(errs...)
}

// parseFile reads a ```file block whose opening fence is on line fence.
func parseFile(name string, fence int, path string, body []string) (exampleFile, error) {
	clean := filepath.ToSlash(filepath.Clean(path))
	if clean != path || !strings.HasPrefix(path, exampleHome+"/") {
		return exampleFile{}, fmt.Errorf("%s:%d: a ```file block names a clean absolute path under %s, got %q", name, fence, exampleHome, path)
	}
	return exampleFile{line: fence, path: path, text: strings.Join(body, "\n") + "\n"}, nil
}

// parseExchange reads the lines of an exchange block whose opening fence is
// on line fence (1-based).
func parseExchange(name, heading string, fence int, body []string) (*exchange, error) {
	ex := &exchange{heading: heading, line: fence}
	var parts []string // the current message's lines
	var cur *step
	finish := func() error {
		if cur == nil {
			return nil
		}
		err := cur.parse(parts)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, cur.line, err)
		}
		ex.steps = append(ex.steps, *cur)
		cur, parts = nil, nil
		return nil
	}
	for j, l := range body {
		ln := fence + 1 + j
		switch {
		case strings.HasPrefix(l, "→ ") || strings.HasPrefix(l, "← "):
			if err := finish(); err != nil {
				return nil, err
			}
			arrow, rest, _ := strings.Cut(l, " ")
			cur = &step{line: ln, send: arrow == "→"}
			parts = []string{rest}
		case strings.TrimSpace(l) == ellipsis:
			if err := finish(); err != nil {
				return nil, err
			}
			ex.elided = true
		case strings.TrimSpace(l) == "":
			continue
		case (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")) && cur != nil:
			parts = append(parts, l)
		default:
			return nil, fmt.Errorf("%s:%d: a line of an exchange starts with \"→ \" or \"← \", continues the message above indented, or is %q alone; got %q", name, ln, ellipsis, l)
		}
	}
	if err := finish(); err != nil {
		return nil, err
	}
	if len(ex.steps) == 0 {
		return nil, fmt.Errorf("%s:%d: an exchange without a message", name, fence)
	}
	return ex, nil
}

// parse reads a message from its lines.
func (s *step) parse(parts []string) error {
	if strings.HasPrefix(parts[0], "Content-Length:") {
		return s.parseFrame(parts)
	}
	s.text = strings.Join(parts, "\n")
	m, err := parseMessage(s.text)
	if err != nil {
		if s.send && !strings.Contains(s.text, ellipsis) {
			return nil // a body that is not JSON, sent as it is
		}
		return fmt.Errorf("%s %w", s.arrow(), err)
	}
	if s.send {
		if err := checkSendable(s.text); err != nil {
			return err
		}
	}
	s.msg = m
	return nil
}

// parseFrame reads a message written as a whole frame: header lines that
// end with the four characters \r\n, then the body on one line.
func (s *step) parseFrame(parts []string) error {
	var b bytes.Buffer
	for i, p := range parts {
		p = strings.TrimLeft(p, " \t")
		if i == len(parts)-1 {
			b.WriteString(p)
			s.text = p
			break
		}
		h, ok := strings.CutSuffix(p, `\r\n`)
		if !ok {
			return fmt.Errorf(`%s a frame's header lines end with \r\n; got %q`, s.arrow(), p)
		}
		b.WriteString(h + "\r\n")
	}
	s.frame = b.Bytes()
	m, err := parseMessage(s.text)
	if err != nil {
		return fmt.Errorf("%s the body of a frame: %w", s.arrow(), err)
	}
	s.msg = m
	return nil
}

// checkSendable refuses the placeholders that stand for no value in a
// message sent: only strings may hold "…" there.
func checkSendable(text string) error {
	out, err := replacePlaceholders(text)
	if err != nil {
		return err
	}
	if out != text {
		return fmt.Errorf("→ a message sent holds a placeholder outside a string; only strings may hold %q there", ellipsis)
	}
	return nil
}

func parseMessage(text string) (*message, error) {
	body, err := decodeWithPlaceholders(text)
	if err != nil {
		return nil, err
	}
	obj, ok := body.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a message is a JSON object")
	}
	m := &message{body: body}
	if id, ok := obj["id"]; ok {
		b, _ := json.Marshal(id)
		m.id = string(b)
	}
	if method, ok := obj["method"].(string); ok {
		m.method = method
	}
	if m.method == "" && m.id == "" {
		return nil, fmt.Errorf("a message has a method or an id")
	}
	return m, nil
}

// The placeholders, as sentinel strings after decoding.
const (
	anyValue  = "\x00any"
	anyArray  = "\x00array"
	anyObject = "\x00object"
)

// decodeWithPlaceholders decodes JSON in which, outside strings, … stands
// for any value, […] for any array and {…} for any object. Numbers decode
// as json.Number.
func decodeWithPlaceholders(text string) (any, error) {
	js, err := replacePlaceholders(text)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(strings.NewReader(js))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if dec.More() {
		return nil, errors.New("not JSON: more than one value")
	}
	return v, nil
}

// replacePlaceholders turns the placeholders outside strings into the
// sentinel strings.
func replacePlaceholders(text string) (string, error) {
	var b strings.Builder
	inString, escaped := false, false
	for i := 0; i < len(text); {
		c := text[i]
		if inString {
			b.WriteByte(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			i++
			continue
		}
		rest := text[i:]
		switch {
		case c == '"':
			inString = true
			b.WriteByte(c)
			i++
		case strings.HasPrefix(rest, "["+ellipsis+"]"):
			b.WriteString(`"\u0000array"`)
			i += len("[" + ellipsis + "]")
		case strings.HasPrefix(rest, "{"+ellipsis+"}"):
			b.WriteString(`"\u0000object"`)
			i += len("{" + ellipsis + "}")
		case strings.HasPrefix(rest, ellipsis):
			b.WriteString(`"\u0000any"`)
			i += len(ellipsis)
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

// compare returns a sentence for every difference between what an example
// wants and what agentls sent (decoded with UseNumber). A "<name>"
// placeholder must equal what it matched before (bound); what it matches
// now is added to binds.
func compare(path string, want, got any, bound, binds map[string]string) []string {
	at := path
	if at == "" {
		at = "the message"
	}
	switch w := want.(type) {
	case string:
		switch w {
		case anyValue:
			return nil
		case anyArray:
			if _, ok := got.([]any); !ok {
				return []string{fmt.Sprintf("%s: got %s, want an array", at, show(got))}
			}
			return nil
		case anyObject:
			if _, ok := got.(map[string]any); !ok {
				return []string{fmt.Sprintf("%s: got %s, want an object", at, show(got))}
			}
			return nil
		}
		g, ok := got.(string)
		if !ok {
			return []string{fmt.Sprintf("%s: got %s, want a string", at, show(got))}
		}
		if isName(w) {
			prev, ok := binds[w]
			if !ok {
				prev, ok = bound[w]
			}
			if ok && prev != g {
				return []string{fmt.Sprintf("%s: got %s, but %s stood for %s before", at, show(g), w, show(prev))}
			}
			binds[w] = g
			return nil
		}
		if strings.Contains(w, ellipsis) {
			if !globMatch(w, g) {
				return []string{fmt.Sprintf("%s: got %s, want a string like %s", at, show(g), show(w))}
			}
			return nil
		}
		if g != w {
			return []string{fmt.Sprintf("%s: got %s, want %s", at, show(g), show(w))}
		}
	case json.Number:
		g, ok := got.(json.Number)
		if !ok {
			return []string{fmt.Sprintf("%s: got %s, want the number %s", at, show(got), w)}
		}
		wf, _ := w.Float64()
		gf, _ := g.Float64()
		if wf != gf {
			return []string{fmt.Sprintf("%s: got %s, want %s", at, g, w)}
		}
	case bool, nil:
		if got != want {
			return []string{fmt.Sprintf("%s: got %s, want %s", at, show(got), show(want))}
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: got %s, want an array", at, show(got))}
		}
		if n := len(w); n > 0 && w[n-1] == anyValue {
			// […, …]: the elements shown, then any number more.
			w = w[:n-1]
			if len(g) < len(w) {
				return []string{fmt.Sprintf("%s: got %d elements, want at least %d: %s", at, len(g), len(w), show(got))}
			}
			g = g[:len(w)]
		}
		if len(g) != len(w) {
			return []string{fmt.Sprintf("%s: got %d elements, want %d: %s", at, len(g), len(w), show(got))}
		}
		var diffs []string
		for i := range w {
			diffs = append(diffs, compare(fmt.Sprintf("%s[%d]", path, i), w[i], g[i], bound, binds)...)
		}
		return diffs
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: got %s, want an object", at, show(got))}
		}
		var diffs []string
		for _, k := range sortedKeys(w) {
			gv, ok := g[k]
			if !ok {
				diffs = append(diffs, fmt.Sprintf("%s: no member %q", at, k))
				continue
			}
			diffs = append(diffs, compare(join(path, k), w[k], gv, bound, binds)...)
		}
		for _, k := range sortedKeys(g) {
			if _, ok := w[k]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s: member %q is not in the example (its value: %s)", at, k, show(g[k])))
			}
		}
		return diffs
	}
	return nil
}

// isName reports whether s is a named placeholder, "<name>".
func isName(s string) bool {
	name, ok := strings.CutPrefix(s, "<")
	if name, ok = strings.CutSuffix(name, ">"); !ok || name == "" {
		return false
	}
	for i, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// globMatch matches s against a pattern in which … stands for any text.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, ellipsis)
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}

// show prints a value for a message, cut to a readable length.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// substituteNames replaces, in a message to send, each "<name>"
// placeholder with the string it matched in a message received.
func substituteNames(text string, binds map[string]string) (string, error) {
	var missing []string
	out := namePattern.ReplaceAllStringFunc(text, func(q string) string {
		name := q[1 : len(q)-1]
		v, ok := binds[name]
		if !ok {
			missing = append(missing, name)
			return q
		}
		b, _ := json.Marshal(v)
		return string(b)
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("→ uses %s before a message received gave it a value", strings.Join(missing, ", "))
	}
	return out, nil
}

// namePattern finds the named placeholders of a message, quotes included.
var namePattern = regexp.MustCompile(`"<[A-Za-z][A-Za-z0-9]*>"`)

// ---- frames on the wire ----

// frame is one frame read from agentls: its bytes as they came, and its
// body.
type frame struct {
	raw  []byte
	body []byte
}

// readFrame reads one LSP frame.
func readFrame(r *bufio.Reader) (frame, error) {
	var raw bytes.Buffer
	n := -1
	for {
		line, err := r.ReadString('\n')
		raw.WriteString(line)
		if err != nil {
			if err == io.EOF && raw.Len() == 0 {
				return frame{}, io.EOF
			}
			return frame{}, fmt.Errorf("reading a header: %w", err)
		}
		h := strings.TrimRight(line, "\r\n")
		if h == "" {
			break
		}
		name, value, ok := strings.Cut(h, ":")
		if ok && strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			if n, err = strconv.Atoi(strings.TrimSpace(value)); err != nil {
				return frame{}, fmt.Errorf("bad Content-Length %q", value)
			}
		}
	}
	if n < 0 {
		return frame{}, fmt.Errorf("a frame without Content-Length: %q", raw.String())
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return frame{}, fmt.Errorf("reading a body of %d bytes: %w", n, err)
	}
	raw.Write(body)
	return frame{raw: raw.Bytes(), body: body}, nil
}

// received is a message from agentls as the replay sees it.
type received struct {
	order  int // 1 for the first message of the exchange
	frame  frame
	text   string // the body with the workspace's real paths written as the example's
	id     string // compacted JSON of the id; "" when absent
	method string
	body   any
}

func (r *received) kind() string {
	switch {
	case r.method != "" && r.id != "":
		return "request " + r.method
	case r.method != "":
		return "notification " + r.method
	}
	return "reply to id " + r.id
}

func decodeReceived(text string) (*received, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var body any
	if err := dec.Decode(&body); err != nil {
		return nil, fmt.Errorf("agentls sent a body that is not JSON: %q: %w", text, err)
	}
	obj, ok := body.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("agentls sent a body that is not an object: %q", text)
	}
	r := &received{text: text, body: body}
	if id, ok := obj["id"]; ok {
		b, _ := json.Marshal(id)
		r.id = string(b)
	}
	r.method, _ = obj["method"].(string)
	return r, nil
}

// withoutID returns a copy of a message's top level without its id: the ids
// of agentls's own requests are its choice, and an example's are labels.
func withoutID(body any) any {
	obj, ok := body.(map[string]any)
	if !ok {
		return body
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "id" {
			out[k] = v
		}
	}
	return out
}

func TestPlaceholders(t *testing.T) {
	for _, c := range []struct {
		name, want, got string
		ok              bool
	}{
		{"… as a value matches any value", `{"a":…}`, `{"a":[1,{}]}`, true},
		{"… as a value still needs the member", `{"a":…}`, `{}`, false},
		{"[…] matches any array", `{"a":[…]}`, `{"a":[1,2]}`, true},
		{"[…] does not match an object", `{"a":[…]}`, `{"a":{}}`, false},
		{"{…} matches any object", `{"a":{…}}`, `{"a":{"b":1}}`, true},
		{`"…" matches any string`, `{"a":"…"}`, `{"a":"x"}`, true},
		{`"…" does not match a number`, `{"a":"…"}`, `{"a":1}`, false},
		{"a string with … matches by its parts", `{"a":"s-…-x"}`, `{"a":"s-12-x"}`, true},
		{"a string with … needs every part", `{"a":"s-…-x"}`, `{"a":"s-12"}`, false},
		{"… in a string is not a value outside it", `{"a":"…"}`, `{"a":"…"}`, true},
		{"[a, …] matches an array that begins with a", `[1,…]`, `[1,2,3]`, true},
		{"[a, …] matches a itself", `[1,…]`, `[1]`, true},
		{"[a, …] needs a", `[1,…]`, `[2,1]`, false},
		{"numbers compare by value", `{"a":1}`, `{"a":1.0}`, true},
		{"arrays compare element by element", `[1,2]`, `[2,1]`, false},
		{"a named placeholder stays the same", `["<id>","<id>"]`, `["x","x"]`, true},
		{"a named placeholder cannot stand for two strings", `["<id>","<id>"]`, `["x","y"]`, false},
		{"two named placeholders are independent", `["<a>","<b>"]`, `["x","y"]`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, err := decodeWithPlaceholders(c.want)
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(strings.NewReader(c.got))
			dec.UseNumber()
			var got any
			if err := dec.Decode(&got); err != nil {
				t.Fatal(err)
			}
			diffs := compare("", want, got, map[string]string{}, map[string]string{})
			if (diffs == nil) != c.ok {
				t.Fatalf("compare(%s, %s) = %q, want ok=%v", c.want, c.got, diffs, c.ok)
			}
		})
	}
}
