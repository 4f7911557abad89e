package workforce

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/codegraph"
	"github.com/agentls/agentls/editors/headless/headlesstest"
	"github.com/agentls/agentls/internal/testkit"
	"github.com/agentls/agentls/tracking"
)

// The tests of this file run tasks against model providers over HTTP, in
// each provider's real streaming wire format (Anthropic's Messages API,
// OpenAI's chat completions), through the real clients. The fake
// providers answer as a test's brain says, count a request's tokens at
// four bytes of its JSON a token, and keep a prompt cache's accounting as
// each provider documents its cache:
//
//   - Anthropic caches the prefix (tools, system, messages, in that
//     order) that ends at a block marked cache_control, when it is at
//     least 1024 tokens; a request reads the longest cached prefix ending
//     at one of its blocks up to 20 blocks before one of its breakpoints,
//     and writes the prefixes that end at its breakpoints;
//   - OpenAI caches every prompt by itself and reads the longest prefix a
//     request shares with an earlier one, from 1024 tokens on, in steps of
//     128 tokens.

// wireMsg is a message of a request as the provider reads it.
type wireMsg struct {
	Role    string // user, assistant, tool (OpenAI's tool results)
	Text    string // its text blocks, joined
	Calls   []string
	Results []string // the text of its tool results
}

// wireReq is a request as the provider read it.
type wireReq struct {
	Body   map[string]any
	System string
	Msgs   []wireMsg
	tools  []string
}

var subtaskRE = regexp.MustCompile(`Your subtask \(([^)]+)\)`)

// agent says who asks: "coordinator", "summary" (a compaction's), or the
// subtask's id.
func (r wireReq) agent() string {
	if len(r.tools) == 1 && r.tools[0] == "plan" {
		return clients.AgentCoordinator
	}
	if n := len(r.Msgs); n > 0 && strings.Contains(r.Msgs[n-1].Text, "will be replaced by your summary") {
		return "summary"
	}
	if len(r.Msgs) > 0 {
		if m := subtaskRE.FindStringSubmatch(r.Msgs[0].Text); m != nil {
			return m[1]
		}
	}
	return "?"
}

// turn is the number of the model's answers in the request.
func (r wireReq) turn() int {
	n := 0
	for _, m := range r.Msgs {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// wireAnswer is what the brain answers.
type wireAnswer struct {
	Text  string
	Calls []clients.ToolCall
}

// wireUse is the accounting of one request: its input tokens, the part
// read from the cache, the part written to it.
type wireUse struct {
	agent                    string
	input, read, write, turn int64
}

// wireServer is a fake provider.
type wireServer struct {
	t        *testing.T
	provider string // "anthropic" or "openai"
	srv      *httptest.Server
	brain    func(wireReq) wireAnswer
	// window is what the model list says of the model, and the bound past
	// which a request is refused as too long (0: none).
	window int64

	mu      sync.Mutex
	reqs    []wireReq
	uses    []wireUse
	cache   map[[32]byte]bool // Anthropic: the prefixes written
	prompts []string          // OpenAI: every prompt seen
	ids     atomic.Int64
}

func newWireServer(t *testing.T, provider string, window int64, brain func(wireReq) wireAnswer) *wireServer {
	t.Helper()
	s := &wireServer{t: t, provider: provider, brain: brain, window: window, cache: map[[32]byte]bool{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// spec and env point a task's model at the server.
func (s *wireServer) spec() string {
	if s.provider == "anthropic" {
		return "anthropic:claude-sonnet-4-5"
	}
	return "openai:gpt-4.1-mini"
}

func (s *wireServer) env(k string) string {
	return map[string]map[string]string{
		"anthropic": {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": s.srv.URL},
		"openai":    {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": s.srv.URL + "/v1"},
	}[s.provider][k]
}

func (s *wireServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		s.models(w, r)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		s.t.Errorf("a request that is not JSON: %v", err)
		http.Error(w, "bad JSON", http.StatusBadRequest)
		return
	}
	req := s.decode(body)
	s.mu.Lock()
	use := s.account(body)
	use.agent, use.turn = req.agent(), int64(req.turn())
	s.reqs = append(s.reqs, req)
	s.uses = append(s.uses, use)
	s.mu.Unlock()
	if s.window > 0 && use.input > s.window {
		s.tooLong(w, use.input)
		return
	}
	ans := s.brain(req)
	w.Header().Set("Content-Type", "text/event-stream")
	if s.provider == "anthropic" {
		s.streamAnthropic(w, ans, use)
	} else {
		s.streamOpenAI(w, ans, use)
	}
}

// models answers the model list (OpenAI) or the model (Anthropic) with
// the window.
func (s *wireServer) models(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if s.provider == "anthropic" {
		fmt.Fprintf(w, `{"type":"model","id":"claude-sonnet-4-5","display_name":"Claude Sonnet 4.5","created_at":"2025-09-29T00:00:00Z","max_input_tokens":%d,"max_tokens":64000}`, s.window)
		return
	}
	fmt.Fprintf(w, `{"object":"list","data":[{"id":"gpt-4.1-mini","object":"model","created":1,"owned_by":"test","context_length":%d}]}`, s.window)
}

func (s *wireServer) tooLong(w http.ResponseWriter, tokens int64) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	if s.provider == "anthropic" {
		fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: %d tokens > %d maximum"}}`, tokens, s.window)
		return
	}
	fmt.Fprintf(w, `{"error":{"message":"This model's maximum context length is %d tokens. However, your messages resulted in %d tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, s.window, tokens)
}

func list(v any) []any         { l, _ := v.([]any); return l }
func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }
func str(v any) string         { s, _ := v.(string); return s }
func canon(v any) string       { b, _ := json.Marshal(v); return string(b) }
func tokensOf(n int) int64     { return int64(n+3) / 4 }
func without(m map[string]any, k string) map[string]any {
	c := make(map[string]any, len(m))
	for kk, v := range m {
		if kk != k {
			c[kk] = v
		}
	}
	return c
}

// decode reads a request's system prompt, tools and messages.
func (s *wireServer) decode(body map[string]any) wireReq {
	req := wireReq{Body: body}
	for _, tl := range list(body["tools"]) {
		name := str(obj(tl)["name"])
		if fn := obj(obj(tl)["function"]); fn != nil {
			name = str(fn["name"])
		}
		req.tools = append(req.tools, name)
	}
	if s.provider == "anthropic" {
		for _, b := range list(body["system"]) {
			req.System += str(obj(b)["text"])
		}
		for _, m := range list(body["messages"]) {
			wm := wireMsg{Role: str(obj(m)["role"])}
			for _, b := range list(obj(m)["content"]) {
				blk := obj(b)
				switch str(blk["type"]) {
				case "text":
					wm.Text += str(blk["text"])
				case "tool_use":
					wm.Calls = append(wm.Calls, str(blk["name"]))
				case "tool_result":
					text := str(blk["content"])
					for _, c := range list(blk["content"]) {
						text += str(obj(c)["text"])
					}
					wm.Results = append(wm.Results, text)
				}
			}
			req.Msgs = append(req.Msgs, wm)
		}
		return req
	}
	for _, m := range list(body["messages"]) {
		msg := obj(m)
		role := str(msg["role"])
		text := str(msg["content"])
		for _, part := range list(msg["content"]) {
			text += str(obj(part)["text"])
		}
		switch role {
		case "system":
			req.System += text
		case "tool":
			req.Msgs = append(req.Msgs, wireMsg{Role: "tool", Results: []string{text}})
		default:
			wm := wireMsg{Role: role, Text: text}
			for _, tc := range list(msg["tool_calls"]) {
				wm.Calls = append(wm.Calls, str(obj(obj(tc)["function"])["name"]))
			}
			req.Msgs = append(req.Msgs, wm)
		}
	}
	return req
}

// account counts a request's tokens and what its provider's cache reads
// and writes of them (under s.mu).
func (s *wireServer) account(body map[string]any) wireUse {
	if s.provider == "openai" {
		var b strings.Builder
		b.WriteString(canon(body["tools"]))
		for _, m := range list(body["messages"]) {
			b.WriteString(canon(m))
		}
		prompt := b.String()
		best := 0
		for _, p := range s.prompts {
			n := 0
			for n < len(p) && n < len(prompt) && p[n] == prompt[n] {
				n++
			}
			best = max(best, n)
		}
		s.prompts = append(s.prompts, prompt)
		use := wireUse{input: tokensOf(len(prompt))}
		if cached := int64(best / 4); cached >= 1024 {
			use.read = 1024 + (cached-1024)/128*128
		}
		return use
	}
	// Anthropic: the blocks in the cache's order, each with whether it
	// is a breakpoint.
	type block struct {
		text string
		mark bool
	}
	var blocks []block
	add := func(prefix string, b any) {
		m := obj(b)
		_, mark := m["cache_control"]
		blocks = append(blocks, block{prefix + canon(without(m, "cache_control")), mark})
	}
	for _, tl := range list(body["tools"]) {
		add("tool:", tl)
	}
	for _, b := range list(body["system"]) {
		add("system:", b)
	}
	for _, m := range list(body["messages"]) {
		for _, b := range list(obj(m)["content"]) {
			add(str(obj(m)["role"])+":", b)
		}
	}
	cum := make([]int64, len(blocks))
	hashes := make([][32]byte, len(blocks))
	h := sha256.New()
	var n int64
	for i, b := range blocks {
		n += tokensOf(len(b.text))
		cum[i] = n
		h.Write([]byte(b.text))
		copy(hashes[i][:], h.Sum(nil))
	}
	use := wireUse{input: n}
	readAt, last := -1, -1
	for i, b := range blocks {
		if !b.mark {
			continue
		}
		last = i
		for j := i; j >= 0 && j >= i-20; j-- {
			if s.cache[hashes[j]] {
				if j > readAt {
					readAt = j
				}
				break
			}
		}
	}
	if readAt >= 0 {
		use.read = cum[readAt]
	}
	for i, b := range blocks {
		if b.mark && i > readAt && cum[i] >= 1024 {
			s.cache[hashes[i]] = true
		}
	}
	if last > readAt && cum[last] >= 1024 {
		use.write = cum[last] - use.read
	}
	return use
}

func (s *wireServer) streamAnthropic(w io.Writer, ans wireAnswer, use wireUse) {
	ev := func(kind string, data any) {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", kind, canon(data))
	}
	ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": use.input - use.read - use.write, "cache_read_input_tokens": use.read,
			"cache_creation_input_tokens": use.write, "output_tokens": 1}}})
	i := 0
	if ans.Text != "" {
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": ans.Text}})
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	for _, c := range ans.Calls {
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{
			"type": "tool_use", "id": fmt.Sprintf("toolu_%d", s.ids.Add(1)), "name": c.Name, "input": map[string]any{}}})
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(c.Arguments)}})
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	stop := "end_turn"
	if len(ans.Calls) > 0 {
		stop = "tool_use"
	}
	ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 20}})
	ev("message_stop", map[string]any{"type": "message_stop"})
}

func (s *wireServer) streamOpenAI(w io.Writer, ans wireAnswer, use wireUse) {
	chunk := func(choices []any, usage any) {
		c := map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4.1-mini", "choices": choices}
		if usage != nil {
			c["usage"] = usage
		}
		fmt.Fprintf(w, "data: %s\n\n", canon(c))
	}
	delta := func(d map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": d, "finish_reason": finish}}
	}
	chunk(delta(map[string]any{"role": "assistant", "content": ans.Text}, nil), nil)
	for i, c := range ans.Calls {
		chunk(delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": fmt.Sprintf("call_%d", s.ids.Add(1)), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": string(c.Arguments)}}}}, nil), nil)
	}
	finish := "stop"
	if len(ans.Calls) > 0 {
		finish = "tool_calls"
	}
	chunk(delta(map[string]any{}, finish), nil)
	chunk([]any{}, map[string]any{"prompt_tokens": use.input, "completion_tokens": 20, "total_tokens": use.input + 20,
		"prompt_tokens_details": map[string]any{"cached_tokens": use.read}})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// requests returns the requests of agent.
func (s *wireServer) requests(agent string) []wireReq {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []wireReq
	for _, r := range s.reqs {
		if r.agent() == agent {
			out = append(out, r)
		}
	}
	return out
}

// wireRun is a task run against a wire server.
type wireRun struct {
	ev   *fakeEvents
	res  *api.RunResult
	e    *Engine
	root string
}

// runWire runs prompt on files with the server's model, the settings
// changed by change; with graph, the workspace has its code graph (and
// the prompts their repo maps), as in the editor.
func runWire(t *testing.T, s *wireServer, files map[string]string, prompt string, change func(*api.Settings), graph ...bool) wireRun {
	t.Helper()
	root := t.TempDir()
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	testkit.WriteFiles(t, root, files)
	ws, err := tracking.Open(tracking.Config{Root: root, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ev := &fakeEvents{}
	models := NewModels(s.env, root, "", nil, zap.NewNop(), nil)
	cfg := Config{Root: root, Editor: headlesstest.New(root, headlesstest.AllCaps()), Events: ev, Tracking: ws, Models: models}
	if len(graph) > 0 && graph[0] {
		g, err := codegraph.New(codegraph.Config{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- g.Run(ctx) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
		cfg.Graph = g
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	st := settings()
	st.Model = s.spec()
	if change != nil {
		change(&st)
	}
	res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: prompt}, st)
	if err != nil {
		t.Fatal(err)
	}
	return wireRun{ev: ev, res: res, e: e, root: root}
}

func (r wireRun) kind(kind string) []api.TaskEvent {
	r.ev.mu.Lock()
	defer r.ev.mu.Unlock()
	var out []api.TaskEvent
	for _, u := range r.ev.updates {
		if u.Event.Kind == kind {
			out = append(out, u.Event)
		}
	}
	return out
}

// twoWorkers plans two subtasks, each reading a file then finishing.
func twoWorkers(req wireReq) wireAnswer {
	switch a := req.agent(); a {
	case clients.AgentCoordinator:
		return wireAnswer{Calls: []clients.ToolCall{call("plan", map[string]any{"subtasks": []any{
			map[string]any{"id": "1", "content": "Look at main.go"}, map[string]any{"id": "2", "content": "Look at pkg/api/api.go"}}})}}
	case "1", "2":
		file := map[string]string{"1": "main.go", "2": "pkg/api/api.go"}[a]
		switch req.turn() {
		case 0:
			return wireAnswer{Text: "Reading.", Calls: []clients.ToolCall{call("read_file", map[string]any{"path": file})}}
		case 1:
			return wireAnswer{Calls: []clients.ToolCall{call("list_files", map[string]any{"pattern": "*.go"})}}
		}
		return wireAnswer{Calls: []clients.ToolCall{call("finish", map[string]any{"summary": "looked at " + file})}}
	}
	return wireAnswer{Text: "?"}
}

var wireProviders = []string{"anthropic", "openai"}

func TestInstructionsReachEveryProvider(t *testing.T) {
	for _, p := range wireProviders {
		t.Run(p+": the system prompt holds the instructions, nested ones for their subtree", func(t *testing.T) {
			s := newWireServer(t, p, 0, twoWorkers)
			r := runWire(t, s, instructionsWorkspace, "look at the code", nil)
			if r.res.State != api.TaskDone {
				t.Fatalf("%s: %s", r.res.State, r.res.Summary)
			}
			for _, agent := range []string{clients.AgentCoordinator, "1", "2"} {
				reqs := s.requests(agent)
				if len(reqs) == 0 {
					t.Fatalf("no request of %s", agent)
				}
				sys := reqs[0].System
				for _, want := range []string{
					`<instructions path="AGENTS.md" applies-to="the whole workspace">` + "\nRun go test ./... before you finish.",
					`<instructions path="pkg/api/AGENTS.md" applies-to="pkg/api/">` + "\nHandlers in pkg/api return typed errors.",
					`<instructions path="web/CLAUDE.md" applies-to="web/">` + "\nUse tabs in web/.",
				} {
					if !strings.Contains(sys, want) {
						t.Errorf("%s's system prompt lacks %q", agent, want)
					}
				}
			}
		})
	}
}

func TestPromptCachingOnEveryProvider(t *testing.T) {
	for _, p := range wireProviders {
		t.Run(p, func(t *testing.T) {
			s := newWireServer(t, p, 0, twoWorkers)
			files := map[string]string{"main.go": "package main\n", "pkg/api/api.go": "package api\n", "AGENTS.md": "Be brief.\n"}
			first := runWire(t, s, files, "look at the code", nil)
			if first.res.State != api.TaskDone {
				t.Fatalf("%s: %s", first.res.State, first.res.Summary)
			}
			// A second task of the same session.
			st := settings()
			st.Model = s.spec()
			second, err := first.e.Run(testkit.Context(t), api.RunParams{Prompt: "look again", SessionID: first.res.SessionID}, st)
			if err != nil || second.State != api.TaskDone {
				t.Fatalf("the second task: %v %+v", err, second)
			}
			var workers []wireReq
			for _, a := range []string{"1", "2"} {
				workers = append(workers, s.requests(a)...)
			}
			if len(workers) != 12 {
				t.Fatalf("%d worker requests, want 12 (two tasks, two workers, three turns)", len(workers))
			}
			if p == "anthropic" {
				t.Run("every worker request marks its tools, system prompt and newest turn; from its second on, the turn before", func(t *testing.T) {
					for _, r := range workers {
						got := marked(r.Body)
						want := []string{fmt.Sprintf("tools[%d]", len(list(r.Body["tools"]))-1), "system[0]"}
						n := len(list(r.Body["messages"]))
						if r.turn() > 0 {
							prev := n - 3 // the results before the last answer
							want = append(want, fmt.Sprintf("messages[%d]", prev))
						}
						want = append(want, fmt.Sprintf("messages[%d]", n-1))
						if strings.Join(got, " ") != strings.Join(want, " ") {
							t.Errorf("turn %d of %s: breakpoints %q, want %q", r.turn(), r.agent(), got, want)
						}
					}
				})
			} else {
				t.Run("the prefix up to the conversation is byte-identical for every worker of both tasks", func(t *testing.T) {
					prefix := func(r wireReq) string {
						return canon(r.Body["tools"]) + canon(list(r.Body["messages"])[0])
					}
					want := prefix(workers[0])
					for _, r := range workers {
						if got := prefix(r); got != want {
							t.Fatalf("turn %d of %s has another prefix:\n%s\n---\n%s", r.turn(), r.agent(), got, want)
						}
					}
				})
			}
			t.Run("from a worker's second request on, the cache reads the conversation up to its last turn", func(t *testing.T) {
				s.mu.Lock()
				defer s.mu.Unlock()
				for _, u := range s.uses {
					if u.agent != "1" && u.agent != "2" || u.turn == 0 {
						continue
					}
					if u.read*10 < u.input*8 {
						t.Errorf("turn %d of %s: %d of %d input tokens read from the cache", u.turn, u.agent, u.read, u.input)
					}
				}
			})
			t.Run("the usage counts the cache reads apart, and prices them at the cache's price", func(t *testing.T) {
				u := second.Usage
				if u.CacheReadTokens == 0 || u.CacheReadTokens > u.InputTokens || u.Cost == nil {
					t.Fatalf("usage %+v", u)
				}
				var last api.TaskEvent
				first.ev.mu.Lock()
				for _, up := range first.ev.updates {
					if up.TaskID == second.TaskID && up.Event.Kind == api.EventUsage {
						last = up.Event
					}
				}
				first.ev.mu.Unlock()
				if last.CacheReadTokens != u.CacheReadTokens {
					t.Errorf("the last usage event says %d read from the cache, the result %d", last.CacheReadTokens, u.CacheReadTokens)
				}
			})
		})
	}
}

// marked lists the places of a request marked cache_control:
// "tools[i]", "system[i]", "messages[i]".
func marked(body map[string]any) []string {
	var out []string
	has := func(v any) bool { _, ok := obj(v)["cache_control"]; return ok }
	for i, tl := range list(body["tools"]) {
		if has(tl) {
			out = append(out, fmt.Sprintf("tools[%d]", i))
		}
	}
	for i, b := range list(body["system"]) {
		if has(b) {
			out = append(out, fmt.Sprintf("system[%d]", i))
		}
	}
	for i, m := range list(body["messages"]) {
		for _, b := range list(obj(m)["content"]) {
			if has(b) {
				out = append(out, fmt.Sprintf("messages[%d]", i))
			}
		}
	}
	return out
}

// readerBrain is readerModel's worker over the wire: it reads f1.txt …
// fN.txt one a turn, noting the running total, and summarises when asked.
func readerBrain(files int) func(wireReq) wireAnswer {
	return func(req wireReq) wireAnswer {
		if req.agent() == clients.AgentCoordinator {
			return wireAnswer{Calls: []clients.ToolCall{call("plan", map[string]any{"subtasks": []any{
				map[string]any{"id": "1", "content": fmt.Sprintf("add up the values of f1.txt to f%d.txt", files)}}})}}
		}
		var msgs []clients.Message
		for _, m := range req.Msgs {
			cm := clients.Message{Role: clients.Role(m.Role), Text: m.Text}
			for _, r := range m.Results {
				cm.ToolResults = append(cm.ToolResults, clients.ToolResult{Content: r})
			}
			msgs = append(msgs, cm)
		}
		total, read := seen(&clients.Request{Messages: msgs})
		if req.agent() == "summary" {
			return wireAnswer{Text: fmt.Sprintf("Read f1.txt to f%d.txt; total so far %d.", read, total)}
		}
		if read == files {
			return wireAnswer{Calls: []clients.ToolCall{call("finish", map[string]any{"summary": fmt.Sprintf("The total is %d.", total)})}}
		}
		return wireAnswer{Text: fmt.Sprintf("Total so far %d after f%d.txt.", total, read),
			Calls: []clients.ToolCall{call("read_file", map[string]any{"path": fmt.Sprintf("f%d.txt", read+1)})}}
	}
}

func TestCompactionOnEveryProvider(t *testing.T) {
	const window = 8000
	for _, p := range wireProviders {
		t.Run(p+": a worker that reads three times the window its provider lists compacts and finishes right", func(t *testing.T) {
			s := newWireServer(t, p, window, readerBrain(24))
			files := readerFiles(24, 4000)
			r := runWire(t, s, files, "add up the values", nil)
			if r.res.State != api.TaskDone || r.res.Summary != "The total is 300." {
				t.Fatalf("%s: %q", r.res.State, r.res.Summary)
			}
			evs := r.kind(api.EventCompacted)
			if len(evs) == 0 {
				t.Fatal("no compacted event")
			}
			for _, ev := range evs {
				if ev.SubtaskID != "1" || ev.TokensBefore < window*8/10 || ev.TokensAfter >= ev.TokensBefore {
					t.Errorf("event %+v", ev)
				}
			}
			var read int64
			for _, f := range files {
				read += tokensOf(len(f))
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			var peak int64
			for _, u := range s.uses {
				peak = max(peak, u.input)
			}
			if read < 3*window || peak > window {
				t.Errorf("the worker read %d tokens through a window of %d; its largest request was %d", read, window, peak)
			}
			if u := r.kind(api.EventUsage); u[len(u)-1].ContextWindow != window {
				t.Errorf("the usage events say a window of %d, the provider %d", u[len(u)-1].ContextWindow, window)
			}
		})
	}
}

// scriptBrain answers as a script's agents would: each agent's n-th
// answer is its n-th turn.
func scriptBrain(t *testing.T, path string) func(wireReq) wireAnswer {
	t.Helper()
	sc, err := clients.LoadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	return func(req wireReq) wireAnswer {
		turns := sc.Turns(req.agent())
		n := req.turn()
		if n >= len(turns) {
			return wireAnswer{Text: "(the script has no more turns)"}
		}
		ans := wireAnswer{Text: turns[n].Text}
		for _, c := range turns[n].ToolCalls {
			ans.Calls = append(ans.Calls, clients.ToolCall{Name: c.Name, Arguments: c.Arguments})
		}
		return ans
	}
}

// TestPromptCacheShareOfTheDemo runs the offline demo's task (make demo:
// examples/greeter, the turns of examples/demo.script.json) against each
// provider's fake, and reports the share of the input tokens its cache
// read, by the fake's accounting (docs/BENCHMARKS.md, Prompt caching):
// over every request, and over each agent's requests from its second on,
// where the goal is 80% at least. The workspace has its code graph, so the
// prompts carry their repo maps, as in the editor. Commands are denied:
// the editor of the test runs none, and the worker of the check is told
// so.
func TestPromptCacheShareOfTheDemo(t *testing.T) {
	files := map[string]string{}
	for _, name := range []string{"README.md", "go.mod", "greet.go", "greet_test.go"} {
		b, err := os.ReadFile(filepath.Join("..", "examples", "greeter", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	const prompt = `Make Greet fall back to "world" for an empty name, add a Farewell function with a test, and run the tests.`
	for _, p := range wireProviders {
		t.Run(p, func(t *testing.T) {
			s := newWireServer(t, p, 0, scriptBrain(t, filepath.Join("..", "examples", "demo.script.json")))
			r := runWire(t, s, files, prompt, func(st *api.Settings) { st.Commands = api.CommandsDeny }, true)
			if r.res.State != api.TaskDone {
				t.Fatalf("%s: %s", r.res.State, r.res.Summary)
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			var all, allRead, later, laterRead int64
			for _, u := range s.uses {
				all += u.input
				allRead += u.read
				if u.turn > 0 {
					later += u.input
					laterRead += u.read
				}
			}
			share := func(read, of int64) float64 { return float64(read) / float64(of) }
			t.Logf("%s: %d requests, %d input tokens, %.0f%% read from the cache; from each agent's second request on: %d input tokens, %.0f%% read from the cache",
				p, len(s.uses), all, 100*share(allRead, all), later, 100*share(laterRead, later))
			if share(laterRead, later) < 0.8 {
				t.Errorf("from each agent's second request on, %.0f%% of the input is read from the cache: the goal is 80%%", 100*share(laterRead, later))
			}
		})
	}
}
