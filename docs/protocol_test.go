package docs_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/handlers"
	"github.com/agentls/agentls/internal/fileuri"
	"github.com/agentls/agentls/internal/redact"
)

var dump = flag.Bool("dump", false, "log every message of each replayed exchange (to write an example)")

// exampleHome is the home directory the examples of PROTOCOL.md are written
// in; the replay runs them in a copy of testdata/home.
const exampleHome = "/home/me"

// stepTimeout bounds the wait for one message an example expects. A
// replay that passes never waits that long; one that fails says what came
// instead.
const stepTimeout = 10 * time.Second

// TestProtocolExamples replays every example exchange of PROTOCOL.md
// against the real server, each on a fresh one, and fails on a message
// that differs from what agentls sends. The convention is written at the
// top of PROTOCOL.md ("Reading the examples").
func TestProtocolExamples(t *testing.T) {
	data, err := os.ReadFile("PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	exs, err := readExchanges("docs/PROTOCOL.md", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(exs) < 20 {
		t.Fatalf("found only %d exchanges in PROTOCOL.md: the reader is broken", len(exs))
	}
	prelude, err := initializePrelude(exs)
	if err != nil {
		t.Fatal(err)
	}
	replayed, messages := 0, 0
	for _, ex := range exs {
		t.Run(ex.name(), func(t *testing.T) {
			replayed++
			messages += len(ex.steps)
			if err := replayExchange(t, prelude, ex, stepTimeout); err != nil {
				t.Error(err)
			}
		})
	}
	t.Logf("replayed %d of the %d exchanges of docs/PROTOCOL.md (%d messages)", replayed, len(exs), messages)
}

// initializePrelude returns the steps of the first exchange that sends
// initialize: every other exchange starts with them.
func initializePrelude(exs []*exchange) ([]step, error) {
	for _, ex := range exs {
		if ex.startsWithInitialize() {
			if ex.elided {
				return nil, fmt.Errorf("the initialize exchange (line %d) must show every message", ex.line)
			}
			return ex.steps, nil
		}
	}
	return nil, errors.New("no exchange sends initialize: the other exchanges start with it")
}

// replayExchange runs one exchange on a fresh server in a fresh copy of the
// example workspace; timeout bounds the wait for each message.
func replayExchange(t *testing.T, prelude []step, ex *exchange, timeout time.Duration) error {
	home := exampleWorkspace(t)
	for _, f := range ex.files {
		to := filepath.Join(home, filepath.FromSlash(strings.TrimPrefix(f.path, exampleHome+"/")))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, []byte(f.text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("AGENTLS_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	srv := startServer(t, home, exampleProviders(t))
	steps := ex.steps
	n := 0
	if !ex.startsWithInitialize() {
		steps = append(append([]step(nil), prelude...), ex.steps...)
		n = len(prelude)
	}
	r := &replay{t: t, srv: srv, home: home, steps: steps, prelude: n, elided: ex.elided, timeout: timeout,
		changed: make(chan struct{}), claimed: make([]*received, len(steps)),
		failed: make([]string, len(steps)), near: make([][]*received, len(steps)),
		binds: map[string]string{}}
	read := make(chan struct{})
	go func() {
		defer close(read)
		r.readLoop()
	}()
	err := r.walk()
	if cerr := srv.close(); cerr != nil && err == nil {
		err = cerr
	}
	<-read
	return err
}

// exampleWorkspace copies testdata/home (the example's /home/me) into a
// temporary directory and returns its path, symlinks resolved.
func exampleWorkspace(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	err = filepath.WalkDir("testdata/home", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("testdata/home", p)
		to := filepath.Join(home, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return home
}

// The keys of the replay's environment.
const (
	exampleKey          = "sk-replay-0123456789abcdef"
	exampleAnthropicKey = "sk-ant-replay-0123456789abcdef"
)

// exampleModels are the models the examples' OpenAI-compatible server
// lists.
var exampleModels = []string{"gpt-4.1", "gpt-4.1-mini"}

// exampleProviders starts the local providers the examples reach and
// returns the environment that points agentls at them:
//   - OpenAI (OPENAI_BASE_URL): it lists exampleModels, answers a model it
//     does not list 404 and every other call 429 (rate limited), to show
//     agentls's retries;
//   - Anthropic (ANTHROPIC_BASE_URL): it refuses the key, 401;
//   - Ollama (OLLAMA_HOST): it has qwen2.5-coder:7b pulled.
func exampleProviders(t *testing.T) map[string]string {
	t.Helper()
	openai := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet && r.URL.Path == "/v1/models" {
			var data []string
			for _, m := range exampleModels {
				data = append(data, fmt.Sprintf(`{"id":%q,"object":"model","created":1744316542,"owned_by":"system"}`, m))
			}
			_, _ = io.WriteString(w, `{"object":"list","data":[`+strings.Join(data, ",")+`]}`)
			return
		}
		var req struct {
			Model string `json:"model"`
		}
		_ = json.Unmarshal(body, &req)
		if !slices.Contains(exampleModels, req.Model) {
			w.WriteHeader(http.StatusNotFound)
			_, _ = fmt.Fprintf(w, `{"error":{"message":"The model %s does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}`, req.Model)
			return
		}
		w.Header().Set("Retry-After", "2")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"error":{"message":"Rate limit reached for gpt-4.1-mini on requests per min (RPM): Limit 3, Used 3, Requested 1.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)
	}))
	t.Cleanup(openai.Close)
	anthropic := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
	}))
	t.Cleanup(anthropic.Close)
	ollama := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/api/tags" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":"not found"}`)
			return
		}
		_, _ = io.WriteString(w, `{"models":[{"name":"qwen2.5-coder:7b","model":"qwen2.5-coder:7b","modified_at":"2025-05-02T10:00:00Z","size":4683087332,"digest":"2b0496514337","details":{"family":"qwen2","parameter_size":"7.6B","quantization_level":"Q4_K_M"}}]}`)
	}))
	t.Cleanup(ollama.Close)
	return map[string]string{
		"OPENAI_BASE_URL": openai.URL + "/v1", "OPENAI_API_KEY": exampleKey,
		"ANTHROPIC_BASE_URL": anthropic.URL, "ANTHROPIC_API_KEY": exampleAnthropicKey,
		"OLLAMA_HOST": ollama.URL,
	}
}

// server is agentls's handlers serving one connection over OS pipes.
type server struct {
	in   *os.File // agentls's stdin, written by the replay
	out  *bufio.Reader
	outR *os.File
	done chan int // the exit code, when Serve returns
}

func startServer(t *testing.T, home string, env map[string]string) *server {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{in: inW, out: bufio.NewReader(outR), outR: outR, done: make(chan int, 1)}
	go func() {
		code := handlers.Serve(context.Background(), inR, outW, handlers.Options{
			Version:  "dev",
			Cwd:      filepath.Join(home, "project"),
			Base:     api.DefaultSettings(),
			Getenv:   func(name string) string { return env[name] },
			Redactor: redact.New(),
		})
		_ = outW.Close()
		_ = inR.Close()
		s.done <- code
	}()
	return s
}

// close ends agentls's input and waits for it to end.
func (s *server) close() error {
	_ = s.in.Close()
	defer s.outR.Close()
	select {
	case <-s.done:
		return nil
	case <-time.After(stepTimeout):
		return fmt.Errorf("agentls did not end within %s of the end of its input", stepTimeout)
	}
}

// replay walks the steps of one exchange while a reader matches what
// agentls sends against them.
type replay struct {
	t       *testing.T
	srv     *server
	home    string
	steps   []step
	prelude int // the first steps are the initialize exchange's
	elided  bool
	timeout time.Duration

	writeMu sync.Mutex

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced when the state below changes
	frontier  int           // a message may match only the steps before it
	claimed   []*received   // per step: the message that matched it
	failed    []string      // per step: why the reply to it differs
	near      [][]*received // per step: messages of its kind that did not match it
	unclaimed []*received
	stray     []*received       // replies to no step
	binds     map[string]string // what each string placeholder matched
	fatal     error
	order     int
	lastClaim int
	ended     bool
}

func (r *replay) where(i int) string {
	if i < r.prelude {
		return fmt.Sprintf("line %d (the initialize exchange every example starts with)", r.steps[i].line)
	}
	return fmt.Sprintf("line %d", r.steps[i].line)
}

func (r *replay) signal() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// readLoop reads agentls's output until it ends.
func (r *replay) readLoop() {
	for {
		f, err := readFrame(r.srv.out)
		if err != nil {
			r.mu.Lock()
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) && r.fatal == nil && !r.ended {
				r.fatal = err
			}
			r.ended = true
			r.signal()
			r.mu.Unlock()
			return
		}
		if call := r.receive(f); call != nil {
			r.answerAsAnEditor(call)
		}
	}
}

// exampleText writes the workspace's real paths in a message received as
// the example's, in paths and in URIs.
func (r *replay) exampleText(body []byte) string {
	// URIs are written as VS Code writes them (internal/fileuri), which
	// escapes more than net/url does (a comma of the test's name).
	escaped := (&url.URL{Path: r.home}).EscapedPath()
	uri := strings.TrimPrefix(fileuri.FromPath(r.home), "file://")
	return strings.NewReplacer(uri, exampleHome, escaped, exampleHome, r.home, exampleHome).Replace(string(body))
}

// receive matches one message against the steps it may answer. It
// returns a request of agentls's that no step takes, for the reader to
// answer.
func (r *replay) receive(f frame) *received {
	rec, err := decodeReceived(r.exampleText(f.body))
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.signal()
	if err != nil {
		if r.fatal == nil {
			r.fatal = err
		}
		return nil
	}
	r.order++
	rec.order, rec.frame = r.order, f
	if *dump {
		r.t.Logf("← %s", rec.text)
	}
	if rec.method == "" {
		r.receiveReply(rec)
		return nil
	}
	for i := 0; i < r.frontier; i++ {
		s := &r.steps[i]
		if s.send || r.claimed[i] != nil || s.msg.method != rec.method || (s.msg.id != "") != (rec.id != "") {
			continue
		}
		if r.differs(s, rec, true) == nil {
			r.claim(i, rec)
			return nil
		}
		r.near[i] = append(r.near[i], rec)
		break // the messages of one method come in the order shown
	}
	r.unclaimed = append(r.unclaimed, rec)
	if rec.id != "" {
		return rec
	}
	return nil
}

// receiveReply matches a reply to a request of the exchange.
func (r *replay) receiveReply(rec *received) {
	for i := range r.steps {
		s := &r.steps[i]
		if s.send || !s.msg.isReply() || s.msg.id != rec.id || r.claimed[i] != nil || r.failed[i] != "" {
			continue
		}
		if d := r.differs(s, rec, true); d != nil {
			r.failed[i] = strings.Join(d, "\n\t")
			return
		}
		r.claim(i, rec)
		return
	}
	r.stray = append(r.stray, rec)
}

// strayReply describes a reply the exchange does not show. One that comes
// after the last message shown is outside the exchange, and allowed.
func strayReply(rec *received) string {
	return fmt.Sprintf("agentls answered id %s, which the example does not show:\n\t%s", rec.id, cut(rec.text))
}

func (r *replay) claim(i int, rec *received) {
	r.claimed[i] = rec
	r.lastClaim = rec.order
}

// differs compares a message with a step; the named placeholders it binds
// are kept only on a match, and only when keep is set.
func (r *replay) differs(s *step, rec *received, keep bool) []string {
	if s.frame != nil {
		if string(s.frame) != string(rec.frame.raw) {
			return []string{fmt.Sprintf("got the frame %q, want %q", rec.frame.raw, s.frame)}
		}
		return nil
	}
	want, got := s.msg.body, rec.body
	if !s.msg.isReply() && s.msg.id != "" {
		want, got = withoutID(want), withoutID(got)
	}
	binds := map[string]string{}
	d := compare("", want, got, r.binds, binds)
	if d == nil && keep {
		for k, v := range binds {
			r.binds[k] = v
		}
	}
	return d
}

// walk sends the → steps and waits for the ← steps, in order.
func (r *replay) walk() error {
	for i := range r.steps {
		s := &r.steps[i]
		if s.send {
			if err := r.send(i); err != nil {
				return err
			}
			continue
		}
		if err := r.await(i); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fatal != nil {
		return r.fatal
	}
	for _, rec := range r.stray {
		if rec.order < r.lastClaim {
			return errors.New(strayReply(rec))
		}
	}
	if r.elided {
		return nil
	}
	var extra []string
	for _, rec := range r.unclaimed {
		if rec.order < r.lastClaim {
			extra = append(extra, fmt.Sprintf("%s: %s", rec.kind(), cut(rec.text)))
		}
	}
	if len(extra) > 0 {
		return fmt.Errorf("agentls sent messages the example does not show (show them, or add a line %q where messages are left out):\n\t%s",
			ellipsis, strings.Join(extra, "\n\t"))
	}
	return nil
}

func (r *replay) send(i int) error {
	s := &r.steps[i]
	r.mu.Lock()
	r.frontier = len(r.steps)
	for j := i + 1; j < len(r.steps); j++ {
		if r.steps[j].send {
			r.frontier = j
			break
		}
	}
	body := s.frame
	if body == nil {
		text, err := substituteNames(s.text, r.binds)
		if err != nil {
			r.mu.Unlock()
			return fmt.Errorf("%s: %w", r.where(i), err)
		}
		text = strings.ReplaceAll(text, exampleHome, r.home)
		if s.msg != nil && s.msg.isReply() {
			if text, err = r.answerID(i, text); err != nil {
				r.mu.Unlock()
				return err
			}
		}
		body = []byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(text), text))
	}
	r.mu.Unlock()
	if *dump {
		r.t.Logf("→ %s", body)
	}
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	if _, err := r.srv.in.Write(body); err != nil {
		return fmt.Errorf("%s: writing to agentls: %w", r.where(i), err)
	}
	return nil
}

// answerID gives the reply of step i the id of the request it answers:
// the example's id is the label of a ← request above it.
func (r *replay) answerID(i int, text string) (string, error) {
	s := &r.steps[i]
	for j := i - 1; j >= 0; j-- {
		q := &r.steps[j]
		if q.send || q.msg == nil || q.msg.method == "" || q.msg.id != s.msg.id {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(text), &obj); err != nil {
			return "", fmt.Errorf("%s: %w", r.where(i), err)
		}
		obj["id"] = json.RawMessage(r.claimed[j].id)
		if err := r.applyAnswered(r.claimed[j], obj["result"]); err != nil {
			return "", fmt.Errorf("%s: %w", r.where(i), err)
		}
		b, err := json.Marshal(obj)
		return string(b), err
	}
	return "", fmt.Errorf("%s: → answers id %s, but no ← request above it has that id", r.where(i), s.msg.id)
}

// applyAnswered applies an edit the example answers applied: true, as the
// editor that answers so would: what agentls reads next holds it.
func (r *replay) applyAnswered(req *received, result json.RawMessage) error {
	var res api.ApplyWorkspaceEditResult
	if req.method != api.MethodApplyEdit || json.Unmarshal(result, &res) != nil || !res.Applied {
		return nil
	}
	var msg struct {
		Params api.ApplyWorkspaceEditParams `json:"params"`
	}
	if err := json.Unmarshal(req.frame.body, &msg); err != nil {
		return err
	}
	return r.applyEdit(msg.Params.Edit)
}

func (r *replay) await(i int) error {
	s := &r.steps[i]
	deadline := time.NewTimer(r.timeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		claimed, failed, fatal, ended, wake := r.claimed[i] != nil, r.failed[i], r.fatal, r.ended, r.changed
		stray := r.stray
		r.mu.Unlock()
		switch {
		case claimed:
			return nil
		case len(stray) > 0:
			// It came before the message awaited: within the exchange.
			return fmt.Errorf("%s: while waiting for %s\n%s%s", r.where(i), cut(s.text), strayReply(stray[0]), r.closest(i, false))
		case failed != "":
			return fmt.Errorf("%s: the reply differs from the example:\n\t%s\nwant %s", r.where(i), failed, s.text)
		case fatal != nil:
			return fmt.Errorf("%s: while waiting for %s\n%w", r.where(i), cut(s.text), fatal)
		case ended:
			return fmt.Errorf("%s: agentls closed its output before sending %s%s", r.where(i), cut(s.text), r.closest(i, true))
		}
		select {
		case <-wake:
		case <-deadline.C:
			return fmt.Errorf("%s: agentls did not send %s within %s%s", r.where(i), cut(s.text), r.timeout, r.closest(i, true))
		}
	}
}

// closest describes the message of the step's kind that came nearest to
// it; when none came, and all is set, the messages that came unclaimed.
func (r *replay) closest(i int, all bool) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	near := r.near[i]
	if len(near) == 0 {
		if !all {
			return ""
		}
		var kinds []string
		for _, rec := range r.unclaimed {
			kinds = append(kinds, rec.kind())
		}
		return fmt.Sprintf("\nnothing of its kind came; unclaimed messages: %v", kinds)
	}
	best, bestDiffs := near[0], []string(nil)
	for _, rec := range near {
		d := r.differs(&r.steps[i], rec, false)
		if bestDiffs == nil || len(d) < len(bestDiffs) {
			best, bestDiffs = rec, d
		}
	}
	return fmt.Sprintf("\n%d messages of its kind came; the nearest differs:\n\t%s\nit was: %s", len(near), strings.Join(bestDiffs, "\n\t"), cut(best.text))
}

func cut(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}

// ---- reverse calls the example does not show ----

// answerAsAnEditor answers a reverse call the example does not show as an
// editor that agrees to everything: files are read from and edits applied
// to the example's workspace, a command is not run and reports success
// with no output, a question gets its first option, a message request its
// first action.
func (r *replay) answerAsAnEditor(rec *received) {
	var req struct {
		Params json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(rec.frame.body, &req)
	result, err := r.editorAnswer(rec.method, req.Params)
	msg := map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(rec.id)}
	if err != nil {
		msg["error"] = map[string]any{"code": api.CodeMethodNotFound, "message": err.Error()}
	} else {
		msg["result"] = result
	}
	body, _ := json.Marshal(msg)
	if *dump {
		r.t.Logf("→ (as an editor) %s", body)
	}
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	_, _ = fmt.Fprintf(r.srv.in, "Content-Length: %d\r\n\r\n%s", len(body), body)
}

func (r *replay) editorAnswer(method string, params json.RawMessage) (any, error) {
	switch method {
	case api.MethodReadFile:
		var p api.ReadFileParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		path, err := r.pathOf(p.URI, p.Path)
		if err != nil {
			return nil, err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return api.ReadFileResult{Content: string(data)}, nil
	case api.MethodApplyEdit:
		var p api.ApplyWorkspaceEditParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		if err := r.applyEdit(p.Edit); err != nil {
			return api.ApplyWorkspaceEditResult{Applied: false, FailureReason: err.Error()}, nil
		}
		return api.ApplyWorkspaceEditResult{Applied: true}, nil
	case api.MethodReferences, api.MethodDefinition:
		// no language server serves the example's documents
		return nil, nil
	case api.MethodDiagnostics:
		// nor has any diagnostics for them
		return api.DiagnosticsResult{Items: []api.DocumentDiagnostics{}}, nil
	case api.MethodRunCommand:
		return api.RunCommandResult{ExitCode: 0, Output: ""}, nil
	case api.MethodAsk:
		var p api.AskParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		if len(p.Options) == 0 {
			return api.AskResult{}, nil
		}
		return api.AskResult{Answer: &p.Options[0]}, nil
	case api.MethodShowMessageRequest:
		var p api.ShowMessageRequestParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		if len(p.Actions) == 0 {
			return nil, nil
		}
		return p.Actions[0], nil
	case api.MethodWorkDoneProgressCreate:
		return nil, nil
	}
	return nil, fmt.Errorf("method not found: %s", method)
}

func (r *replay) pathOf(uri, rel string) (string, error) {
	if uri == "" {
		return filepath.Join(r.home, "project", filepath.FromSlash(rel)), nil
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return "", fmt.Errorf("not a file URI: %q", uri)
	}
	return filepath.FromSlash(u.Path), nil
}

// applyEdit applies a workspace edit to the disk, change by change.
func (r *replay) applyEdit(we api.WorkspaceEdit) error {
	edit := func(uri string, edits []api.TextEdit) error {
		path, err := r.pathOf(uri, "")
		if err != nil {
			return err
		}
		old, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text, err := headless.ApplyTextEdits(string(old), edits)
		if err != nil {
			return err
		}
		return headless.WriteFileAtomic(path, []byte(text))
	}
	for uri, edits := range we.Changes {
		if err := edit(uri, edits); err != nil {
			return err
		}
	}
	for _, dc := range we.DocumentChanges {
		var err error
		switch {
		case dc.TextDocumentEdit != nil:
			var edits []api.TextEdit
			for _, e := range dc.TextDocumentEdit.Edits {
				edits = append(edits, api.TextEdit{Range: e.Range, NewText: e.NewText})
			}
			err = edit(dc.TextDocumentEdit.TextDocument.URI, edits)
		case dc.CreateFile != nil:
			var path string
			if path, err = r.pathOf(dc.CreateFile.URI, ""); err == nil {
				err = headless.WriteFileAtomic(path, nil)
			}
		case dc.DeleteFile != nil:
			var path string
			if path, err = r.pathOf(dc.DeleteFile.URI, ""); err == nil {
				err = os.Remove(path)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// TestReplayCatchesWrongExamples plants wrong examples, so the replay is
// known to be able to fail, each with a message that says what is wrong.
func TestReplayCatchesWrongExamples(t *testing.T) {
	data, err := os.ReadFile("PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	exs, err := readExchanges("docs/PROTOCOL.md", data)
	if err != nil {
		t.Fatal(err)
	}
	prelude, err := initializePrelude(exs)
	if err != nil {
		t.Fatal(err)
	}
	const run = `→ {"jsonrpc":"2.0","id":10,"method":"agent/run","params":{"prompt":"Add a greet function and test it","taskId":"t1"}}` + "\n"
	for _, c := range []struct {
		name, exchange, want string
	}{
		{"a frame whose Content-Length is not its body's length",
			"→ Content-Length: 52\\r\\n\n  \\r\\n\n  {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"agent/ping\",\"params\":{}}\n← {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"data\":null}}\n",
			`agentls answered id null, which the example does not show`},
		{"a reply frame that differs byte for byte",
			"→ {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"agent/ping\",\"params\":{}}\n← Content-Length: 48\\r\\n\n  \\r\\n\n  {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"data\":null} }\n",
			`got the frame`},
		{"a value that differs",
			`→ {"jsonrpc":"2.0","id":4,"method":"agent/ping","params":{"data":{"n":1}}}` + "\n" + `← {"jsonrpc":"2.0","id":4,"result":{"data":{"n":2}}}`,
			`result.data.n: got 1, want 2`},
		{"a kind that differs",
			`→ {"jsonrpc":"2.0","id":4,"method":"agent/ping","params":{"data":1}}` + "\n" + `← {"jsonrpc":"2.0","id":4,"result":{"data":"1"}}`,
			`result.data: got 1, want a string`},
		{"a member agentls sends and the example lacks",
			`→ {"jsonrpc":"2.0","id":4,"method":"agent/ping","params":{"data":1}}` + "\n" + `← {"jsonrpc":"2.0","id":4,"result":{}}`,
			`member "data" is not in the example`},
		{"a member the example shows and agentls does not send",
			`→ {"jsonrpc":"2.0","id":4,"method":"agent/ping","params":{"data":1}}` + "\n" + `← {"jsonrpc":"2.0","id":4,"result":{"data":1,"n":2}}`,
			`no member "n"`},
		{"a string that does not read as its pattern says",
			`→ {"jsonrpc":"2.0","id":4,"method":"agent/ping","params":{"data":"abc"}}` + "\n" + `← {"jsonrpc":"2.0","id":4,"result":{"data":"x…"}}`,
			`want a string like "x…"`},
		{"a notification agentls never sends",
			`→ {"jsonrpc":"2.0","id":4,"method":"agent/ping","params":{}}` + "\n" + `← {"jsonrpc":"2.0","id":4,"result":{"data":null}}` + "\n" +
				`← {"jsonrpc":"2.0","method":"window/showMessage","params":{"type":3,"message":"hello"}}`,
			`agentls did not send {"jsonrpc":"2.0","method":"window/showMessage"`},
		{"messages left out without a … line",
			run + `← {"jsonrpc":"2.0","id":10,"result":{…}}`,
			`agentls sent messages the example does not show`},
		{"a named placeholder that stands for two strings",
			run + "…\n" + `← {"jsonrpc":"2.0","method":"agent/taskUpdate","params":{"taskId":"<id>","sessionId":"<id>","seq":1,"state":"planning","subtasks":[],"event":{"kind":"stateChanged","state":"planning"}}}`,
			`params.taskId: got "t1", but <id> stood for`},
	} {
		t.Run("fails on "+c.name, func(t *testing.T) {
			md := "### planted\n\n```exchange\n" + c.exchange + "\n```\n"
			exs, err := readExchanges("planted.md", []byte(md))
			if err != nil {
				t.Fatal(err)
			}
			if len(exs) != 1 {
				t.Fatalf("read %d exchanges, want 1", len(exs))
			}
			err = replayExchange(t, prelude, exs[0], 2*time.Second)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("replay = %v\nwant an error containing %q", err, c.want)
			}
		})
	}

	t.Run("fails on a block of → and ← lines that is not fenced as an exchange", func(t *testing.T) {
		md := "```json\n→ {\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"agent/ping\"}\n```\n"
		_, err := readExchanges("planted.md", []byte(md))
		if err == nil || !strings.Contains(err.Error(), "planted.md:2: a block with → and ← lines must be fenced as ```exchange") {
			t.Fatalf("readExchanges = %v", err)
		}
	})
}
