package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentls/agentls/api"
)

// Turn is one scripted model answer (docs/MODELS.md, scripted model).
type Turn struct {
	// Thinking streams before the text when the request asks for thinking.
	Thinking  string           `json:"thinking,omitempty"`
	Text      string           `json:"text,omitempty"`
	ToolCalls []ScriptToolCall `json:"toolCalls,omitempty"`
	Usage     *api.Usage       `json:"usage,omitempty"`
	// DelayMs waits before answering (the context ends the wait).
	DelayMs int64 `json:"delayMs,omitempty"`
	// Error makes the call fail with this message.
	Error string `json:"error,omitempty"`
}

// ScriptToolCall is a tool call of a Turn.
type ScriptToolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Script is the scripted model, script:PATH. Each agent ("coordinator", a
// subtask id, or "N:<agent>" for the N-th agent/run of the process, N ≥ 2)
// answers its calls from its own list of turns, in order, whatever order the
// agents run in. It is safe for concurrent use.
type Script struct {
	path   string
	agents map[string][]Turn
	order  []string // keys as they appear in the file

	mu   sync.Mutex
	next map[string]int // key -> index of the next turn
	seen []Seen         // the calls that carried images
}

// Seen is a call of the scripted model that carried images, and the images
// (of its messages and tool results, in order): the scripted model takes
// every image it is given, and keeps what it saw for the tests that ask.
type Seen struct {
	Agent  string
	Images []Image
}

// maxSeen bounds what a Script keeps of the images it saw.
const maxSeen = 64

// Seen returns the calls that carried images, oldest first (the first
// maxSeen).
func (s *Script) Seen() []Seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Seen(nil), s.seen...)
}

// ScriptKey is the key of an agent's list for the run-th agent/run: the
// agent's name for run 1 (or 0), "N:<agent>" for run N ≥ 2.
func ScriptKey(agent string, run int) string {
	if run <= 1 {
		return agent
	}
	return strconv.Itoa(run) + ":" + agent
}

// LoadScript reads and checks a script file. A mistake is reported with
// the agent and the 1-based turn it is in.
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("script %s: %w", path, err)
	}
	s.path = path
	return s, nil
}

// ParseScript decodes and checks a script.
func ParseScript(data []byte) (*Script, error) {
	var top struct {
		Agents json.RawMessage `json:"agents"`
	}
	if err := strictDecode(data, &top); err != nil {
		return nil, jsonError(data, err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	if err := exactKeys(fields, "agents"); err != nil {
		return nil, err
	}
	if len(top.Agents) == 0 || string(top.Agents) == "null" {
		return nil, errors.New(`no "agents" object: a script is {"agents": {"coordinator": [turns…], "<subtask id>": [turns…]}}`)
	}
	keys, raws, err := orderedObject(top.Agents)
	if err != nil {
		return nil, fmt.Errorf("agents: %w", err)
	}
	s := &Script{agents: map[string][]Turn{}, next: map[string]int{}}
	for i, key := range keys {
		if err := checkKey(key); err != nil {
			return nil, fmt.Errorf("agent %q: %w", key, err)
		}
		var rawTurns []json.RawMessage
		if err := json.Unmarshal(raws[i], &rawTurns); err != nil || rawTurns == nil && string(bytes.TrimSpace(raws[i])) != "[]" {
			return nil, fmt.Errorf("agent %q: turns must be a list, e.g. [{\"text\": \"…\"}]", key)
		}
		turns := make([]Turn, len(rawTurns))
		for j, raw := range rawTurns {
			if err := checkTurnKeys(raw); err != nil {
				return nil, fmt.Errorf("agent %q turn %d: %w", key, j+1, err)
			}
			if err := strictDecode(raw, &turns[j]); err != nil {
				return nil, fmt.Errorf("agent %q turn %d: %w", key, j+1, err)
			}
			if err := turns[j].check(); err != nil {
				return nil, fmt.Errorf("agent %q turn %d: %w", key, j+1, err)
			}
		}
		s.agents[key] = turns
		s.order = append(s.order, key)
	}
	return s, nil
}

func checkKey(key string) error {
	if key == "" {
		return errors.New("an agent name is empty")
	}
	n, agent, ok := strings.Cut(key, ":")
	if !ok {
		return nil
	}
	run, err := strconv.Atoi(n)
	switch {
	case err != nil:
		return nil // a subtask id with a colon in it
	case agent == "":
		return fmt.Errorf("no agent after %q", n+":")
	case run < 2:
		return fmt.Errorf("run numbers start at 2 (the first run uses the plain key %q)", agent)
	}
	return nil
}

func (t *Turn) check() error {
	if t.DelayMs < 0 {
		return fmt.Errorf("delayMs is %d, not ≥ 0", t.DelayMs)
	}
	if t.Usage != nil && (t.Usage.InputTokens < 0 || t.Usage.OutputTokens < 0 || t.Usage.CacheReadTokens < 0 || t.Usage.CacheWriteTokens < 0) {
		return errors.New("usage counts must be ≥ 0")
	}
	if t.Error != "" && (t.Text != "" || len(t.ToolCalls) > 0) {
		return errors.New(`an "error" turn fails the call: it has no text or toolCalls`)
	}
	for i, c := range t.ToolCalls {
		if strings.TrimSpace(c.Name) == "" {
			return fmt.Errorf("toolCalls[%d]: name is empty", i)
		}
		if len(c.Arguments) > 0 && string(c.Arguments) != "null" {
			var obj map[string]json.RawMessage
			if json.Unmarshal(c.Arguments, &obj) != nil {
				return fmt.Errorf("toolCalls[%d] (%s): arguments must be a JSON object", i, c.Name)
			}
		}
	}
	return nil
}

// Fork returns the script from its start: the same turns, its own
// position and its own Seen, as a second session plays it.
func (s *Script) Fork() *Script {
	return &Script{path: s.path, agents: s.agents, order: s.order, next: map[string]int{}}
}

// Agents returns the agent keys in the order of the file.
func (s *Script) Agents() []string { return append([]string(nil), s.order...) }

// Turns returns a copy of an agent's list.
func (s *Script) Turns(key string) []Turn { return append([]Turn(nil), s.agents[key]...) }

// Complete answers from the next turn of the request's agent.
func (s *Script) Complete(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error) {
	key := ScriptKey(req.Agent, req.Run)
	s.mu.Lock()
	turns := s.agents[key]
	n := s.next[key]
	if n >= len(turns) {
		s.mu.Unlock()
		return nil, &Error{Kind: ErrScriptExhausted, Message: "script exhausted for agent " + key}
	}
	s.next[key] = n + 1
	var imgs []Image
	for _, m := range req.Messages {
		imgs = append(imgs, m.Images...)
		for _, r := range m.ToolResults {
			imgs = append(imgs, r.Images...)
		}
	}
	if len(imgs) > 0 && len(s.seen) < maxSeen {
		s.seen = append(s.seen, Seen{Agent: key, Images: imgs})
	}
	s.mu.Unlock()
	t := turns[n]
	if t.DelayMs > 0 {
		if err := sleepCtx(ctx, time.Duration(t.DelayMs)*time.Millisecond); err != nil {
			return nil, cancelled(ctx, "script", "", err)
		}
	}
	if ctx.Err() != nil {
		return nil, cancelled(ctx, "script", "", ctx.Err())
	}
	if t.Error != "" {
		return nil, &Error{Kind: ErrScriptTurn, Message: t.Error}
	}
	resp := &Response{Text: t.Text, StopReason: StopEndTurn}
	if t.Usage != nil {
		resp.Usage = *t.Usage
	}
	em := &emitter{fn: onDelta}
	if t.Thinking != "" && req.Thinking != nil {
		for _, piece := range pieces(t.Thinking, scriptThinkingPiece) {
			em.emit(Delta{Thinking: piece})
		}
		resp.Thinking = []ThinkingBlock{{Text: t.Thinking}}
	}
	if t.Text != "" {
		em.emit(Delta{Text: t.Text})
	}
	for i, c := range t.ToolCalls {
		// Unique within the process and the same on every replay.
		id := fmt.Sprintf("script_%s_t%d_c%d", sanitizeID(key), n+1, i)
		args := arguments(c.Arguments)
		if string(args) == "null" {
			args = json.RawMessage("{}")
		}
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: id, Name: c.Name, Arguments: args})
		em.emit(Delta{ToolCall: &ToolCallDelta{Index: i, ID: id, Name: c.Name, Arguments: string(args)}})
	}
	if len(resp.ToolCalls) > 0 {
		resp.StopReason = StopToolUse
	}
	return resp, nil
}

// sanitizeID keeps ids to the characters every provider accepts
// ([a-zA-Z0-9_-]); anything else becomes '-' followed by its code.
func sanitizeID(key string) string {
	var b strings.Builder
	for _, r := range key {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, "-%x", r)
		}
	}
	return b.String()
}

// checkTurnKeys refuses keys that are not the protocol's, with their exact
// spelling (encoding/json would take "toolcalls" for "toolCalls").
func checkTurnKeys(raw json.RawMessage) error {
	var turn map[string]json.RawMessage
	if err := json.Unmarshal(raw, &turn); err != nil {
		return errors.New("a turn must be an object: {thinking?, text?, toolCalls?, usage?, delayMs?, error?}")
	}
	if err := exactKeys(turn, "thinking", "text", "toolCalls", "usage", "delayMs", "error"); err != nil {
		return err
	}
	if u, ok := turn["usage"]; ok && string(u) != "null" {
		var usage map[string]json.RawMessage
		if json.Unmarshal(u, &usage) == nil {
			if err := exactKeys(usage, "inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"); err != nil {
				return fmt.Errorf("usage: %w", err)
			}
		}
	}
	var calls []map[string]json.RawMessage
	if json.Unmarshal(turn["toolCalls"], &calls) == nil {
		for i, c := range calls {
			if err := exactKeys(c, "name", "arguments"); err != nil {
				return fmt.Errorf("toolCalls[%d]: %w", i, err)
			}
		}
	}
	return nil
}

func exactKeys(obj map[string]json.RawMessage, allowed ...string) error {
	for k := range obj {
		found := false
		for _, a := range allowed {
			found = found || k == a
		}
		if !found {
			return fmt.Errorf("unknown field %q (fields are %s)", k, strings.Join(allowed, ", "))
		}
	}
	return nil
}

func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("extra data after the JSON value")
	}
	return nil
}

// jsonError adds the line and column of a syntax error.
func jsonError(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := 1, 1
		for _, c := range data[:min(int(se.Offset), len(data))] {
			if c == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
		}
		return fmt.Errorf("line %d column %d: %w", line, col, err)
	}
	return err
}

// orderedObject splits a JSON object into its keys (in order) and values.
func orderedObject(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("must be an object of agent name → list of turns")
	}
	var keys []string
	var vals []json.RawMessage
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key := tok.(string) // object keys are always strings
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("agent %q: %w", key, err)
		}
		if seen[key] {
			return nil, nil, fmt.Errorf("agent %q is listed twice", key)
		}
		seen[key] = true
		keys = append(keys, key)
		vals = append(vals, v)
	}
	return keys, vals, nil
}

// scriptThinkingPiece bounds a piece of the scripted model's thinking, in
// bytes: it streams as a real model's does, in several deltas.
const scriptThinkingPiece = 40

// pieces cuts s into pieces of at most n bytes, never inside a UTF-8
// character.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			_, cut = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}
