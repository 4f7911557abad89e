package handlers_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/internal/testkit"
)

// anthropicFake is a local Anthropic messages API: it answers each call
// with the event stream answer gives for it (1-based), and keeps every
// request body.
type anthropicFake struct {
	srv    *httptest.Server
	answer func(n int, body map[string]any) string

	mu     sync.Mutex
	bodies []map[string]any
}

func newAnthropicFake(t *testing.T, answer func(n int, body map[string]any) string) *anthropicFake {
	t.Helper()
	f := &anthropicFake{answer: answer}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			// The model agentls reads the context window from: a server
			// without it.
			http.NotFound(w, r)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		f.mu.Lock()
		f.bodies = append(f.bodies, body)
		n := len(f.bodies)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, f.answer(n, body))
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *anthropicFake) requests() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.bodies...)
}

// env points agentls at the fake.
func (f *anthropicFake) env() func(string) string {
	return func(name string) string {
		return map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test-0123456789abcdef", "ANTHROPIC_BASE_URL": f.srv.URL}[name]
	}
}

// anthropicEvents writes a stream: its message_start, each block (a
// thinking block when thinking is not "", then a text block), and its end.
func anthropicEvents(thinking, signature, text string) string {
	var b strings.Builder
	ev := func(name string, v any) {
		j, _ := json.Marshal(v)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, j)
	}
	ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant",
		"model": "claude-sonnet-4-5", "content": []any{}, "stop_reason": nil, "usage": map[string]any{"input_tokens": 100, "output_tokens": 1}}})
	i := 0
	if thinking != "" {
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
		half := len(thinking) / 2
		for _, part := range []string{thinking[:half], thinking[half:]} {
			ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "thinking_delta", "thinking": part}})
		}
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "signature_delta", "signature": signature}})
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
	ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": text}})
	ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 10}})
	ev("message_stop", map[string]any{"type": "message_stop"})
	return b.String()
}

// A PNG of one pixel.
var pixelPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")

func TestRunAttachments(t *testing.T) {
	// The coordinator answers without a plan (the run becomes one
	// subtask) and the worker with prose (its summary).
	fake := newAnthropicFake(t, func(n int, _ map[string]any) string { return anthropicEvents("", "", "Done as the screenshot shows.") })
	r := startRun(t, runOpts{
		files: map[string]string{
			"main.go":       "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n",
			"README.md":     "# demo\n",
			"docs/shot.png": string(pixelPNG),
		},
		options: map[string]any{"model": "anthropic:claude-sonnet-4-5"},
		getenv:  fake.env(),
	})
	// The editor has main.go open with an unsaved edit: the attachment is
	// the buffer.
	r.ed.OpenBuffer("main.go", "package main\n\nfunc main() {\n\tprintln(\"hello\") // unsaved\n}\n")
	res, err := r.run(t, api.RunParams{Prompt: "Make the output match the screenshot; README.md says how.", TaskID: "t1",
		Attachments: []api.Attachment{
			{Type: api.AttachFile, Path: "main.go", Range: &api.Range{Start: api.Position{Line: 2}, End: api.Position{Line: 4}}},
			{Type: api.AttachImage, Data: base64.StdEncoding.EncodeToString(pixelPNG), MimeType: "image/png", Name: "screenshot.png"},
			{Type: api.AttachImage, URI: r.ed.URI("docs/shot.png")},
		}})
	if err != nil || res.State != api.TaskDone {
		t.Fatalf("run = %+v, %v", res, err)
	}
	reqs := fake.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want the coordinator's and the worker's", len(reqs))
	}
	for i, who := range []string{"the coordinator", "the worker"} {
		first := reqs[i]["messages"].([]any)[0].(map[string]any)
		blocks := first["content"].([]any)
		t.Run(who+" is given the file's lines, with its path, as the editor has them", func(t *testing.T) {
			text, _ := blocks[0].(map[string]any)["text"].(string)
			if !strings.Contains(text, "<attachment path=\"main.go\" lines=\"3-4\">\nfunc main() {\n\tprintln(\"hello\") // unsaved\n</attachment>") {
				t.Errorf("text = %q", text)
			}
			if !strings.Contains(text, `name="screenshot.png" type="image/png"`) || !strings.Contains(text, `name="docs/shot.png"`) {
				t.Errorf("the text does not name the images: %q", text)
			}
		})
		t.Run(who+" is given both images as base64 image blocks", func(t *testing.T) {
			image := map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": base64.StdEncoding.EncodeToString(pixelPNG)}}
			want, _ := json.Marshal(image)
			// The last block of the newest turn is a cache breakpoint.
			image["cache_control"] = map[string]any{"type": "ephemeral"}
			wantLast, _ := json.Marshal(image)
			if len(blocks) != 3 || mustJSON(t, blocks[1]) != string(want) || mustJSON(t, blocks[2]) != string(wantLast) {
				t.Errorf("blocks = %s", mustJSON(t, blocks))
			}
		})
	}
	t.Run("the heat map shows the attached files as userProvided and the one the prompt names as userReferenced", func(t *testing.T) {
		var snap api.HeatSnapshot
		if err := r.ed.Call(testkit.Context(t), api.MethodHeatSnapshot, api.HeatSnapshotParams{TaskID: "t1"}, &snap); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, n := range snap.Nodes {
			got[n.Path] = n.LastAction
		}
		want := map[string]string{"main.go": api.ActionUserProvided, "docs/shot.png": api.ActionUserProvided, "README.md": api.ActionUserReferenced}
		for p, a := range want {
			if got[p] != a {
				t.Errorf("%s: %q, want %q (nodes %+v)", p, got[p], a, snap.Nodes)
			}
		}
	})
	t.Run("the session records what was attached", func(t *testing.T) {
		var s api.SessionResult
		if err := r.ed.Call(testkit.Context(t), api.MethodSession, api.SessionParams{SessionID: res.SessionID}, &s); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("\n\nAttached: main.go (lines 3-4), screenshot.png (image/png, %d bytes), docs/shot.png (image/png, %d bytes)", len(pixelPNG), len(pixelPNG))
		if m := s.Messages[0]; m.Role != "user" || !strings.HasSuffix(m.Text, want) {
			t.Errorf("first message = %+v", m)
		}
	})
}

func TestRunAttachmentsRefused(t *testing.T) {
	outside := t.TempDir()
	r := startRun(t, runOpts{
		script: `{"agents": {"coordinator": [{"text": "one step"}], "1": [{"text": "done"}]}}`,
		files: map[string]string{
			"main.go":    "package main\n",
			"big.txt":    strings.Repeat("x", 100),
			"photo.png":  string(pixelPNG),
			"notes.png":  "just text\n",
			".git/HEAD":  "ref: refs/heads/main\n",
			"pixel.data": "\x00\x01",
		},
		options: map[string]any{"attachments": map[string]any{"maxFileBytes": 50, "maxImageBytes": 1024, "maxTotalBytes": 2048}},
	})
	png := base64.StdEncoding.EncodeToString(pixelPNG)
	cases := []struct {
		name string
		att  api.Attachment
		says string
	}{
		{"refuses an attachment without a type", api.Attachment{Path: "main.go"}, `"type" is required`},
		{"refuses a file outside the workspace", api.Attachment{Type: api.AttachFile, Path: outside + "/x.go"}, "not under the workspace root"},
		{"refuses a file in a denied zone", api.Attachment{Type: api.AttachFile, Path: ".git/HEAD"}, `denied by zones.deny "**/.git/**"`},
		{"refuses a file that is not there", api.Attachment{Type: api.AttachFile, Path: "gone.go"}, "no such file: gone.go"},
		{"refuses a file larger than maxFileBytes", api.Attachment{Type: api.AttachFile, Path: "big.txt"}, "100 bytes, more than attachments.maxFileBytes (50)"},
		{"refuses a binary file attached as text", api.Attachment{Type: api.AttachFile, Path: "pixel.data"}, `attach an image as type "image"`},
		{"refuses a range past the end of the file", api.Attachment{Type: api.AttachFile, Path: "main.go", Range: &api.Range{Start: api.Position{Line: 9}, End: api.Position{Line: 10}}}, "past the file's 1 lines"},
		{"refuses image data that is not base64", api.Attachment{Type: api.AttachImage, Data: "not base64!", MimeType: "image/png"}, "not base64"},
		{"refuses image data without its type", api.Attachment{Type: api.AttachImage, Data: png}, `needs its "mimeType"`},
		{"refuses image data whose bytes are not its type", api.Attachment{Type: api.AttachImage, Data: png, MimeType: "image/jpeg"}, "is image/png, not the image/jpeg its mimeType says"},
		{"refuses an image file that is not an image", api.Attachment{Type: api.AttachImage, Path: "notes.png"}, "its bytes are text/plain"},
		{"refuses an image larger than maxImageBytes", api.Attachment{Type: api.AttachImage, Data: base64.StdEncoding.EncodeToString(append(append([]byte{}, pixelPNG...), make([]byte, 2000)...)), MimeType: "image/png"}, "more than attachments.maxImageBytes (1024)"},
		{"refuses a file given a mimeType", api.Attachment{Type: api.AttachFile, Path: "main.go", MimeType: "text/plain"}, "has no \"data\" or \"mimeType\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.run(t, api.RunParams{Prompt: "look", Attachments: []api.Attachment{c.att}})
			if code(err) != api.CodeInvalidParams || !strings.Contains(err.Error(), `"attachments"[0]`) || !strings.Contains(err.Error(), c.says) {
				t.Errorf("err = %v, want -32602 naming attachments[0] and saying %q", err, c.says)
			}
		})
	}
	t.Run("refuses attachments heavier in all than maxTotalBytes", func(t *testing.T) {
		img := api.Attachment{Type: api.AttachImage, Path: "photo.png"}
		many := []api.Attachment{img}
		for range 2048 / len(pixelPNG) {
			many = append(many, img)
		}
		_, err := r.run(t, api.RunParams{Prompt: "look", Attachments: many})
		if code(err) != api.CodeInvalidParams || !strings.Contains(err.Error(), "more than attachments.maxTotalBytes (2048)") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("keeps serving: the next run with a good attachment works, and no refused run is in the sessions", func(t *testing.T) {
		res, err := r.run(t, api.RunParams{Prompt: "look", Attachments: []api.Attachment{{Type: api.AttachFile, Path: "main.go"}}})
		if err != nil || res.State != api.TaskDone {
			t.Fatalf("run = %+v, %v", res, err)
		}
		var list api.SessionsResult
		if err := r.ed.Call(testkit.Context(t), api.MethodSessions, struct{}{}, &list); err != nil {
			t.Fatal(err)
		}
		if len(list.Sessions) != 1 {
			t.Errorf("sessions = %+v", list.Sessions)
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHeatSettings reads a file in the worker's first turn, then asks a
// question in its second, and looks at the heat map while the question
// waits: the file is in context unless contextTurns is 1.
func TestHeatSettings(t *testing.T) {
	const script = `{"agents": {
	  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "read, then ask"}]}}]}],
	  "1": [
	    {"toolCalls": [{"name": "read_file", "arguments": {"path": "a.txt"}}], "usage": {"inputTokens": 100, "outputTokens": 1}},
	    {"toolCalls": [{"name": "ask_human", "arguments": {"question": "Go on?"}}], "usage": {"inputTokens": 120, "outputTokens": 1}},
	    {"toolCalls": [{"name": "finish", "arguments": {"summary": "done"}}]}]}}`
	inContextWhileAsking := func(t *testing.T, r *runEnv) bool {
		t.Helper()
		release := make(chan struct{})
		asked := make(chan struct{})
		r.ed.Handle(api.MethodAsk, func(ctx context.Context, raw json.RawMessage) (any, error) {
			close(asked)
			return blockingAsk(release, "yes")(ctx, raw)
		})
		out := r.runAsync(t, api.RunParams{Prompt: "read a.txt, then ask", TaskID: "t1"})
		within(t, 10*time.Second, asked)
		var snap api.HeatSnapshot
		if err := r.ed.Call(testkit.Context(t), api.MethodHeatSnapshot, api.HeatSnapshotParams{TaskID: "t1"}, &snap); err != nil {
			t.Fatal(err)
		}
		close(release)
		if o := within(t, 10*time.Second, out); o.err != nil || o.res.State != api.TaskDone {
			t.Fatalf("run = %+v, %v", o.res, o.err)
		}
		for _, n := range snap.Nodes {
			if n.Path == "a.txt" {
				return n.InContext
			}
		}
		t.Fatalf("a.txt is not on the heat map: %+v", snap.Nodes)
		return false
	}
	t.Run("keeps a file read one turn ago in context by default", func(t *testing.T) {
		r := startRun(t, runOpts{script: script, files: map[string]string{"a.txt": "a\n"}})
		if !inContextWhileAsking(t, r) {
			t.Error("a.txt left the context after one turn with contextTurns 3")
		}
	})
	t.Run("takes it out after one turn with contextTurns 1, set while the server runs", func(t *testing.T) {
		r := startRun(t, runOpts{script: script, files: map[string]string{"a.txt": "a\n"}})
		// The heat map is open (the tracking opens on first use): the
		// change reaches it as it runs.
		if err := r.ed.Call(testkit.Context(t), api.MethodSessions, struct{}{}, &api.SessionsResult{}); err != nil {
			t.Fatal(err)
		}
		if err := r.ed.Notify(testkit.Context(t), api.MethodDidChangeConfiguration,
			map[string]any{"settings": map[string]any{"agentls": map[string]any{"heat": map[string]any{"contextTurns": 1}}}}); err != nil {
			t.Fatal(err)
		}
		if inContextWhileAsking(t, r) {
			t.Error("a.txt is still in context after one turn with contextTurns 1")
		}
	})
	t.Run("refuses a heat setting out of range at initialize", func(t *testing.T) {
		ed := start(t, headless.Options{NoInitialize: true, InitializationOptions: map[string]any{"heat": map[string]any{"decay": 1.5}}})
		_, err := ed.Initialize(testkit.Context(t))
		if code(err) != api.CodeInvalidParams || !strings.Contains(err.Error(), "initializationOptions.heat.decay: must be a number above 0 to 1, got 1.5") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestRunThinking(t *testing.T) {
	// Each call thinks, then answers in prose: the coordinator's answer
	// makes one subtask, the worker's is its summary.
	fake := newAnthropicFake(t, func(n int, _ map[string]any) string {
		return anthropicEvents(fmt.Sprintf("Call %d: what is asked is small.", n), "sig", "Nothing to change.")
	})
	r := startRun(t, runOpts{
		options: map[string]any{"model": "anthropic:claude-sonnet-4-5", "thinking": map[string]any{"enabled": true, "budgetTokens": 2048}},
		getenv:  fake.env(),
	})
	res, err := r.run(t, api.RunParams{Prompt: "Check the code", TaskID: "t1"})
	if err != nil || res.State != api.TaskDone {
		t.Fatalf("run = %+v, %v", res, err)
	}
	t.Run("asks the provider for thinking with the setting's budget", func(t *testing.T) {
		for _, body := range fake.requests() {
			if got := mustJSON(t, body["thinking"]); got != `{"budget_tokens":2048,"type":"enabled"}` {
				t.Errorf("thinking = %s", got)
			}
		}
	})
	t.Run("streams each agent's thinking to the editor as thinking events, before its text", func(t *testing.T) {
		thought := map[string]string{}
		var kinds []string
		for _, u := range r.updates(t, "t1") {
			switch u.Event.Kind {
			case api.EventThinking:
				thought[u.Event.SubtaskID] += u.Event.Text
				kinds = append(kinds, "thinking:"+u.Event.SubtaskID)
			case api.EventMessageDelta:
				kinds = append(kinds, "delta:"+u.Event.SubtaskID)
			}
		}
		if thought[""] != "Call 1: what is asked is small." || thought["1"] != "Call 2: what is asked is small." {
			t.Errorf("thinking = %q", thought)
		}
		if got := strings.Join(kinds, " "); !strings.HasPrefix(got, "thinking: ") || !strings.Contains(got, "thinking:1 delta:1") {
			t.Errorf("order = %s", got)
		}
	})
}
