// Package enginestest holds what the engine tests need: local fake model
// servers that speak each provider's real streaming wire format (Anthropic
// Messages, OpenAI Responses, Gemini generateContent), scripted per test,
// and the environment that points each real agent at its fake, offline.
//
// It is for tests only: nothing outside a _test.go file imports it.
//
// A script is a list of turns. The turn a request gets is the number of
// tool results the request already carries: the first request of a prompt
// gets turn 0, the request after the first tool call's result turn 1, and
// so on, whatever side calls (titles, summaries, checks) the agent makes
// in between; a request past the script, or one without tools (a side
// call), gets a short text. A turn may hold the request until the test
// releases it or the client goes away (Hold), to stop an agent mid-call.
package enginestest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// Turn is one answer of the fake model.
type Turn struct {
	// Text is what the model says (streamed in a few pieces).
	Text string
	// Tool, when set, is a tool call after the text.
	Tool *ToolCall
	// Hold makes the request wait until Release or the client goes away.
	Hold bool
}

// ToolCall is a call of the agent's tool Name with Input (marshalled to
// JSON). "{cwd}" in a string of Input is replaced by the agent's working
// directory as its request tells it (Claude Code's "Working directory:",
// Codex's <cwd>, Gemini CLI's workspace directories): an isolated agent
// works in a directory the test cannot know beforehand. A Name of
// "~suffix" is the tool the request offers whose name ends with suffix:
// each agent names an MCP server's tools its own way
// (mcp__agentls__mcp__everything__echo, agentls__…).
type ToolCall struct {
	Name  string
	Input any
}

// Say is a turn that only says text.
func Say(text string) Turn { return Turn{Text: text} }

// Call is a turn that calls a tool.
func Call(name string, input any) Turn { return Turn{Tool: &ToolCall{Name: name, Input: input}} }

// Request is what the fake received.
type Request struct {
	Path  string
	Body  []byte
	Turn  int  // the turn it was given (-1: a side call)
	Tools bool // it offered tools
}

// Server is a fake model server.
type Server struct {
	URL string

	wire   wire
	script []Turn

	mu       sync.Mutex
	requests []Request
	release  chan struct{}
	held     chan struct{} // receives when a request starts holding
}

// wire is a provider's format.
type wire interface {
	// inspect tells how many tool results a request carries and whether it
	// offers tools.
	inspect(body []byte) (results int, tools bool)
	// answer writes a turn as the provider would, streamed or not.
	answer(w http.ResponseWriter, r *http.Request, body []byte, t Turn, n int)
}

func newServer(t testing.TB, wf wire, script []Turn) *Server {
	s := &Server{wire: wf, script: script, release: make(chan struct{}), held: make(chan struct{}, 16)}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		s.Release()
		srv.CloseClientConnections()
		srv.Close()
	})
	s.URL = srv.URL
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost {
		// Model lists and the like: nothing to offer.
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"data":[],"models":[]}`)
		return
	}
	results, tools := s.wire.inspect(body)
	turn := Turn{Text: "Done."}
	n := -1
	if tools {
		n = results
		if n < len(s.script) {
			turn = s.script[n]
		}
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, Body: body, Turn: n, Tools: tools})
	release := s.release
	s.mu.Unlock()
	if turn.Hold {
		select {
		case s.held <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		turn = Turn{Text: "Released."}
	}
	if turn.Tool != nil && strings.HasPrefix(turn.Tool.Name, "~") {
		turn.Tool = &ToolCall{Name: offeredTool(body, turn.Tool.Name[1:]), Input: turn.Tool.Input}
	}
	if turn.Tool != nil {
		if cwd := agentCwd(body); cwd != "" {
			in := strings.ReplaceAll(mustJSON(turn.Tool.Input), "{cwd}", jsonEscape(cwd))
			var v any
			_ = json.Unmarshal([]byte(in), &v)
			turn.Tool = &ToolCall{Name: turn.Tool.Name, Input: v}
		}
	}
	s.wire.answer(w, r, body, turn, len(s.Requests()))
}

// cwdPatterns find an agent's working directory in its request.
var cwdPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)working directory: ([^\\"\s]+)`),
	regexp.MustCompile(`<cwd>([^<]+)</cwd>`),
	regexp.MustCompile(`Workspace Directories:\*\*\\n  - ([^\\"]+)`),
}

func agentCwd(body []byte) string {
	for _, re := range cwdPatterns {
		if m := re.FindSubmatch(body); m != nil {
			return string(m[1])
		}
	}
	return ""
}

// offeredTool is the name of the tool the request offers whose name ends
// with suffix (suffix itself when it offers none).
func offeredTool(body []byte, suffix string) string {
	re := regexp.MustCompile(`"name"\s*:\s*"([A-Za-z0-9_.\-]*` + regexp.QuoteMeta(suffix) + `)"`)
	if m := re.FindSubmatch(body); m != nil {
		return string(m[1])
	}
	return suffix
}

// jsonEscape is s as it is written inside a JSON string.
func jsonEscape(s string) string {
	b := mustJSON(s)
	return b[1 : len(b)-1]
}

// Requests returns what the server received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Held receives once per request that begins to hold.
func (s *Server) Held() <-chan struct{} { return s.held }

// Release lets every held request go on (with a short text).
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.release:
	default:
		close(s.release)
	}
}

// pieces splits a text in up to three parts, as a stream would.
func pieces(text string) []string {
	if len(text) < 6 {
		return []string{text}
	}
	a, b := len(text)/3, 2*len(text)/3
	return []string{text[:a], text[a:b], text[b:]}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func sseEvent(w io.Writer, event string, data any) {
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", mustJSON(data))
}

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// streamed reports whether the request asks for a stream.
func streamed(r *http.Request, body []byte) bool {
	if strings.Contains(r.URL.Path, "stream") || r.URL.Query().Get("alt") == "sse" {
		return true
	}
	var v struct {
		Stream bool `json:"stream"`
	}
	_ = json.Unmarshal(body, &v)
	return v.Stream
}

// countKey counts the objects in a JSON document that have member key
// with value val ("" : any value).
func countKey(body []byte, key, val string) int {
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return 0
	}
	n := 0
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			if m, ok := x[key]; ok {
				if s, _ := m.(string); val == "" || s == val {
					n++
				}
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(v)
	return n
}

// hasNonEmpty reports whether the top-level member key is a non-empty array.
func hasNonEmpty(body []byte, key string) bool {
	var v map[string]json.RawMessage
	if json.Unmarshal(body, &v) != nil {
		return false
	}
	var arr []json.RawMessage
	return json.Unmarshal(v[key], &arr) == nil && len(arr) > 0
}
