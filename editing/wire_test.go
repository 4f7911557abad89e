package editing

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless/headlesstest"
	"github.com/agentls/agentls/rpc"
)

var _ Editor = (*rpc.Editor)(nil)

// editorSide answers the reverse calls of the sidecar with a fake editor,
// after a trip through the real framing and JSON of package rpc.
type editorSide struct{ fe *headlesstest.Editor }

func (editorSide) Gate(*rpc.Request) error                          { return nil }
func (editorSide) HandleNotification(context.Context, *rpc.Request) {}

func (h editorSide) HandleCall(ctx context.Context, req *rpc.Request) (any, error) {
	switch req.Method() {
	case api.MethodReadFile:
		var p api.ReadFileParams
		if err := rpc.DecodeParams(req.Params(), &p); err != nil {
			return nil, err
		}
		text, err := h.fe.ReadFile(ctx, p.Path, p.URI)
		if err != nil {
			return nil, api.Errorf(api.CodeInternalError, "%v", err)
		}
		return api.ReadFileResult{Content: text}, nil
	case api.MethodApplyEdit:
		var p api.ApplyWorkspaceEditParams
		if err := rpc.DecodeParams(req.Params(), &p); err != nil {
			return nil, err
		}
		return h.fe.ApplyEdit(ctx, p, api.Machine)
	case api.MethodShowMessageRequest:
		var p api.ShowMessageRequestParams
		if err := rpc.DecodeParams(req.Params(), &p); err != nil {
			return nil, err
		}
		return h.fe.ShowMessageRequest(ctx, p)
	}
	return nil, api.Errorf(api.CodeMethodNotFound, "method not found: %s", req.Method())
}

type noCalls struct{}

func (noCalls) Gate(*rpc.Request) error { return nil }
func (noCalls) HandleCall(context.Context, *rpc.Request) (any, error) {
	return nil, api.Errorf(api.CodeMethodNotFound, "the test editor serves no calls")
}
func (noCalls) HandleNotification(context.Context, *rpc.Request) {}

// wireEnv is a workspace whose editor is a real *rpc.Editor talking over
// pipes to a fake editor: the same path as in the running server.
func wireEnv(t *testing.T, caps api.Caps, mode string, files map[string]string) *env {
	t.Helper()
	e := newEnv(t, caps, mode, api.Zones{}, files)
	sr, ew := io.Pipe() // editor -> sidecar
	er, sw := io.Pipe() // sidecar -> editor
	sidecar := rpc.NewConn(rpc.NewStream(sr, sw, nil), nil)
	editor := rpc.NewConn(rpc.NewStream(er, ew, nil), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { _ = sidecar.Serve(ctx, noCalls{}); done <- struct{}{} }()
	go func() { _ = editor.Serve(ctx, editorSide{e.ed}); done <- struct{}{} }()
	t.Cleanup(func() {
		cancel()
		_ = sidecar.Close()
		_ = editor.Close()
		sr.Close()
		er.Close()
		<-done
		<-done
	})
	rpcEd := rpc.NewEditor(sidecar, caps, api.DefaultSettings().Timeouts)
	ws, err := New(Config{Root: e.root, EditMode: mode, Editor: rpcEd, Observer: e.obs,
		Warn: func(ctx context.Context, msg string) { e.warn = append(e.warn, msg) }})
	if err != nil {
		t.Fatal(err)
	}
	e.ws = ws
	return e
}

func TestOverTheWire(t *testing.T) {
	ctx := context.Background()
	noAnnotations := headlesstest.AllCaps()
	noAnnotations.ChangeAnnotation = false
	cases := []struct {
		name    string
		caps    api.Caps
		mode    string
		answer  string
		refuse  string
		applied bool
	}{
		{"applies in apply mode", headlesstest.AllCaps(), api.EditApply, "", "", true},
		{"applies an approved annotated proposal", headlesstest.AllCaps(), api.EditPropose, "", "", true},
		{"refuses a rejected annotated proposal", headlesstest.AllCaps(), api.EditPropose, "", "rejected in the editor", false},
		{"applies a proposal approved in a message", noAnnotations, api.EditPropose, actionApply, "", true},
		{"refuses a proposal rejected in a message", noAnnotations, api.EditPropose, actionReject, "", false},
		{"writes the file itself without applyEdit", noApplyCaps(), api.EditApply, "", "", true},
		{"falls back from branch to propose outside git", headlesstest.AllCaps(), api.EditBranch, "", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := wireEnv(t, c.caps, c.mode, map[string]string{"main.go": mainGo, "old.txt": "x\n"})
			e.ed.SetAnswer(c.answer)
			e.ed.Refuse(c.refuse)
			a := e.agent("")
			ch, err := a.Edit(ctx, "main.go", "hi", "héllo 😀", false)
			if ch.Applied != c.applied || (err == nil) != c.applied {
				t.Fatalf("Edit = %+v, %v; want applied %v", ch, err, c.applied)
			}
			want := mainGo
			if c.applied {
				want = strings.Replace(mainGo, "hi", "héllo 😀", 1)
			} else if !errors.Is(err, ErrRejected) {
				t.Errorf("err = %v, want ErrRejected", err)
			}
			if got := e.read(t, "main.go"); got != want {
				t.Fatalf("file = %q, want %q", got, want)
			}
			if !c.applied {
				return
			}
			// create and delete through the same path
			if _, err := a.Write(ctx, "pkg/new.go", "package pkg\n"); err != nil {
				t.Fatalf("Write: %v", err)
			}
			if got := e.read(t, "pkg/new.go"); got != "package pkg\n" {
				t.Fatalf("created file = %q", got)
			}
			if _, err := a.Read(ctx, "old.txt", 0, 0); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Delete(ctx, "old.txt"); err != nil {
				t.Fatalf("Delete: %v", err)
			}
		})
	}
	t.Run("refuses a change on text edited in the editor since the read", func(t *testing.T) {
		e := wireEnv(t, headlesstest.AllCaps(), api.EditApply, map[string]string{"main.go": mainGo})
		a := e.agent("")
		if _, err := a.Read(ctx, "main.go", 0, 0); err != nil {
			t.Fatal(err)
		}
		e.ed.OpenBuffer(filepath.Join(e.ws.Root(), "main.go"), "// typed\n"+mainGo)
		if _, err := a.Edit(ctx, "main.go", "hi", "hello", false); !errors.Is(err, ErrConflict) {
			t.Fatalf("Edit = %v, want a conflict", err)
		}
		if len(e.ed.Applied()) != 0 {
			t.Fatal("a conflicting edit reached the editor")
		}
	})
	t.Run("leaves the old file whole when the own write is interrupted", func(t *testing.T) {
		e := wireEnv(t, noApplyCaps(), api.EditApply, map[string]string{"main.go": mainGo})
		e.ws.renameFn = func(string, string) error { return errors.New("disk full") }
		if _, err := e.agent("").Edit(ctx, "main.go", "hi", "hello", false); !errors.Is(err, ErrNotApplied) {
			t.Fatalf("Edit = %v, want ErrNotApplied", err)
		}
		if got := e.read(t, "main.go"); got != mainGo {
			t.Fatalf("file = %q", got)
		}
	})
}
