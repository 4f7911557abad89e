package acpface

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/contain"
	"github.com/agentls/agentls/internal/fileuri"
	"github.com/agentls/agentls/internal/fsutil"
	"github.com/agentls/agentls/internal/wsedit"
)

// editor is the workforce's Editor (and editing's) for one session: the
// ACP client. The workforce's rules (zones, intents, edit modes, the
// conflict check, the trace, the heat) are applied before any of these
// calls; what the client cannot do, agentls does the same way itself.
//
//   - ReadFile is fs/read_text_file: the client's buffer, unsaved changes
//     included. Without fs.readTextFile, editing reads the disk.
//   - ApplyEdit applies the workforce's edit itself (wsedit.Stage on
//     the text the client has) and writes each file whole with
//     fs/write_text_file, or, without fs.writeTextFile, atomically on disk;
//     a deletion is always agentls's own (ACP has none). In propose mode
//     each file waits for session/request_permission with its diff first.
//     Every file written adds its diff to the tool call that made it.
//   - ShowMessageRequest (a command's or an MCP tool's approval, an
//     ask_human with options) is session/request_permission on the tool
//     call that asks.
//   - RunCommand is terminal/create, shown on the tool call, then
//     terminal/wait_for_exit within the command's timeout (terminal/kill
//     past it), terminal/output and terminal/release. Without terminal,
//     the workforce runs the command itself.
type editor struct{ s *session }

func (e *editor) client() *acp.ClientConn { return e.s.srv.client }

// Caps says what the workforce may ask: edits always (applied as above,
// creates and deletes included, with confirmation in propose mode), reads
// and commands when the client has them.
func (e *editor) Caps() api.Caps {
	c := e.client().Capabilities()
	return api.Caps{
		ApplyEdit: true, DocumentChanges: true, ChangeAnnotation: true, CreateFile: true, DeleteFile: true,
		ShowMessage: true, ReadFile: c.FS.ReadTextFile, RunCommand: c.Terminal,
	}
}

// path is the absolute path of a file the workforce names by its
// workspace-relative path and its URI.
func (e *editor) path(rel, uri string) string {
	if rel == "" && uri != "" {
		if p, err := fileuri.ToPath(uri); err == nil {
			return p
		}
	}
	return absPath(e.s.root, rel)
}

func (e *editor) ReadFile(ctx context.Context, rel, uri string) (string, error) {
	res, err := e.client().ReadTextFile(ctx, &acp.ReadTextFileRequest{SessionID: e.s.id, Path: e.path(rel, uri)})
	if err != nil {
		return "", err
	}
	return res.Content, nil
}

// Ask is not offered: a question without options has no place in ACP, and
// one with options is a permission request (ShowMessageRequest).
func (e *editor) Ask(context.Context, api.AskParams) (*string, error) {
	return nil, fmt.Errorf("agent/ask: %w", api.ErrUnsupported)
}

// ---- questions ----

// optionKinds are the permission kinds of the actions the workforce offers
// (docs/PROTOCOL.md §4); any other action (an ask_human option) is
// allow_once.
var optionKinds = map[string]string{
	"Run": acp.AllowOnce, "Apply": acp.AllowOnce, "Always allow": acp.AllowAlways,
	"Deny": acp.RejectOnce, "Reject": acp.RejectOnce,
}

func (e *editor) ShowMessageRequest(ctx context.Context, p api.ShowMessageRequestParams) (*api.MessageActionItem, error) {
	if len(p.Actions) == 0 {
		e.s.warn(p.Message)
		return nil, nil
	}
	title := oneLine(p.Message)
	id := e.s.book.call(ctx, title, acp.KindOther)
	defer e.s.book.end(id, true)
	options := make([]acp.PermissionOption, len(p.Actions))
	for i, a := range p.Actions {
		kind, ok := optionKinds[a.Title]
		if !ok {
			kind = acp.AllowOnce
		}
		options[i] = acp.PermissionOption{OptionID: fmt.Sprintf("%d", i), Name: a.Title, Kind: kind}
	}
	outcome, err := e.permission(ctx, acp.ToolCallUpdate{
		ToolCallID: id, Status: acp.StatusPending, Content: []acp.ToolCallContent{acp.TextContent(p.Message)},
	}, options)
	if err != nil || outcome == nil {
		return nil, err
	}
	for i, o := range options {
		if o.OptionID == *outcome {
			return &p.Actions[i], nil
		}
	}
	return nil, fmt.Errorf("%s: the client chose %q, which was not offered", acp.MethodSessionRequestPermission, *outcome)
}

// permission asks, once the updates before it (the call's announcement)
// have left, and returns the option chosen, or nil when the prompt was
// cancelled meanwhile.
func (e *editor) permission(ctx context.Context, call acp.ToolCallUpdate, options []acp.PermissionOption) (*string, error) {
	if err := e.s.book.flush(ctx); err != nil {
		return nil, err
	}
	res, err := e.client().RequestPermission(ctx, &acp.RequestPermissionRequest{SessionID: e.s.id, ToolCall: call, Options: options})
	if err != nil {
		return nil, err
	}
	switch res.Outcome.Outcome {
	case acp.OutcomeSelected:
		return &res.Outcome.OptionID, nil
	case acp.OutcomeCancelled:
		return nil, nil
	}
	return nil, fmt.Errorf("%s: outcome %q is neither selected nor cancelled", acp.MethodSessionRequestPermission, res.Outcome.Outcome)
}

// ---- edits ----

// staged is one file of an edit (wsedit.File), with where it is: as the
// client names it (under the cwd it gave) and relative to the root.
type staged struct {
	*wsedit.File
	abs, rel string
}

// ApplyEdit applies a workspace edit as described on editor: every change
// is computed first (nothing is written when one cannot be), then each
// file needing confirmation is asked about, then the files are written, in
// the edit's order.
func (e *editor) ApplyEdit(ctx context.Context, p api.ApplyWorkspaceEditParams, _ api.Wait) (api.ApplyWorkspaceEditResult, error) {
	files, fail := e.stage(ctx, p.Edit)
	if fail != nil {
		return *fail, nil
	}
	ids := make([]string, len(files))
	written := make([]bool, len(files))
	defer func() {
		for i, id := range ids {
			if id != "" {
				e.s.book.end(id, written[i]) // agentls's own calls; a worker's ends with its result
			}
		}
	}()
	accepted, asked := 0, 0
	for i, f := range files {
		title, kind := changeTitle(f)
		ids[i] = e.s.book.call(ctx, title, kind)
		if !f.Confirm {
			accepted++
			continue
		}
		asked++
		choice, err := e.permission(ctx, acp.ToolCallUpdate{
			ToolCallID: ids[i], Title: title, Kind: kind, Status: acp.StatusPending,
			Content: []acp.ToolCallContent{diffOf(f)}, Locations: []acp.ToolCallLocation{locationOf(f)},
		}, []acp.PermissionOption{
			{OptionID: "apply", Name: "Apply", Kind: acp.AllowOnce},
			{OptionID: "reject", Name: "Reject", Kind: acp.RejectOnce},
		})
		switch {
		case err != nil:
			return api.ApplyWorkspaceEditResult{}, fmt.Errorf("asking to approve the change to %s: %w", f.rel, err)
		case choice == nil:
			return api.ApplyWorkspaceEditResult{Applied: false, FailureReason: "the prompt was cancelled before the change was approved"}, nil
		case *choice == "apply":
			accepted++
		default:
			files[i] = nil // rejected: not written
		}
	}
	if accepted == 0 && asked > 0 {
		return api.ApplyWorkspaceEditResult{Applied: false, FailureReason: "the user rejected the change"}, nil
	}
	for i, f := range files {
		if f == nil {
			continue
		}
		if err := e.write(ctx, f); err != nil {
			return *wsedit.Failed(f.First, "%s: %v", f.rel, err), nil
		}
		written[i] = true
		loc := locationOf(f)
		e.s.book.add(ids[i], diffOf(f), &loc)
	}
	return api.ApplyWorkspaceEditResult{Applied: true}, nil
}

// stage computes every file of the edit (wsedit.Stage): fail is set for
// an edit that cannot be applied (a file that must or must not exist,
// edits that do not fit, a path outside the workspace or that cannot be
// read). Only the files a change is about are returned.
func (e *editor) stage(ctx context.Context, edit api.WorkspaceEdit) ([]*staged, *api.ApplyWorkspaceEditResult) {
	where := map[*wsedit.File]*staged{}
	load := func(uri string) (*wsedit.File, error) {
		named, err := fileuri.ToPath(uri)
		if err != nil {
			return nil, err
		}
		rp, err := e.s.dir.Resolve(named)
		if err != nil {
			return nil, fmt.Errorf("%s is outside the workspace %s: %w", named, e.s.root, err)
		}
		// The file as the client names it: under the cwd it gave.
		abs := absPath(e.s.root, rp.Rel)
		text, exists, err := e.current(ctx, rp.Rel, abs)
		if err != nil {
			return nil, err
		}
		f := &wsedit.File{Name: rp.Rel, Existed: exists, Old: text}
		where[f] = &staged{File: f, abs: abs, rel: rp.Rel}
		return f, nil
	}
	files, fail := wsedit.Stage(edit, load, wsedit.Options{})
	if fail != nil {
		return nil, fail
	}
	var out []*staged
	for _, f := range files {
		if f.Touched {
			out = append(out, where[f])
		}
	}
	return out, nil
}

// current is a file's text as the client has it (fs/read_text_file), else
// as the disk has it, and whether it exists.
func (e *editor) current(ctx context.Context, rel, abs string) (string, bool, error) {
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", false, nil
	case err != nil:
		return "", false, err
	case fi.IsDir():
		return "", false, fmt.Errorf("%s is a directory", rel)
	}
	if e.client().Capabilities().FS.ReadTextFile {
		res, err := e.client().ReadTextFile(ctx, &acp.ReadTextFileRequest{SessionID: e.s.id, Path: abs})
		if err != nil {
			return "", false, err
		}
		return res.Content, true, nil
	}
	b, _, err := contain.ReadRegular(abs, 0)
	if err != nil {
		return "", false, err
	}
	return string(b), true, nil
}

// write carries one file's change out: fs/write_text_file where the client
// takes it (its directories made first), else an atomic write of agentls's
// own; a deletion is agentls's own.
func (e *editor) write(ctx context.Context, f *staged) error {
	if !f.Exists {
		if err := os.Remove(f.abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return fsutil.SyncDir(filepath.Dir(f.abs))
	}
	if e.client().Capabilities().FS.WriteTextFile {
		if !f.Existed {
			if err := os.MkdirAll(filepath.Dir(f.abs), 0o755); err != nil {
				return err
			}
		}
		_, err := e.client().WriteTextFile(ctx, &acp.WriteTextFileRequest{SessionID: e.s.id, Path: f.abs, Content: f.Text})
		return err
	}
	if f.Existed {
		cur, _, err := contain.ReadRegular(f.abs, 0)
		if err != nil {
			return err
		}
		if string(cur) != f.Old {
			return fmt.Errorf("changed on disk while the change was being made; read it again")
		}
	}
	return fsutil.Write(f.abs, []byte(f.Text), fsutil.WriteOptions{Perm: 0o644, MkdirAll: true, Exclusive: !f.Existed})
}

func changeTitle(f *staged) (title, kind string) {
	switch {
	case !f.Exists:
		return "Delete " + f.rel, acp.KindDelete
	case !f.Existed:
		return "Create " + f.rel, acp.KindEdit
	}
	return "Edit " + f.rel, acp.KindEdit
}

// diffOf is the change of a file as the client shows it.
func diffOf(f *staged) acp.ToolCallContent {
	if !f.Existed {
		return acp.DiffContent(f.abs, nil, f.Text)
	}
	old := f.Old
	return acp.DiffContent(f.abs, &old, f.Text)
}

// locationOf is the file with the first line the change touches (from 1).
func locationOf(f *staged) acp.ToolCallLocation {
	line := 1
	a, b := strings.SplitAfter(f.Old, "\n"), strings.SplitAfter(f.Text, "\n")
	for line-1 < len(a) && line-1 < len(b) && a[line-1] == b[line-1] {
		line++
	}
	return acp.ToolCallLocation{Path: f.abs, Line: &line}
}

// ---- commands ----

// shellArgs is the command line a terminal runs a command with: `sh -c`,
// or on Windows `cmd.exe /d /s /c`, as agentls's own shell does.
func shellArgs(command string) (string, []string) {
	if runtime.GOOS == "windows" {
		return "cmd.exe", []string{"/d", "/s", "/c", command}
	}
	return "sh", []string{"-c", command}
}

// terminalOutput bounds what a terminal keeps of a command's output (its
// end); the model reads the head and tail of it.
const terminalOutput = 1 << 20

// releaseTimeout bounds terminal/kill and terminal/release, made whatever
// became of the command.
const releaseTimeout = 10 * time.Second

// terminalCreating is called with a command's context as its terminal is
// asked for: a test answers the terminal/create after that context ends.
var terminalCreating = func(context.Context) {}

func (e *editor) RunCommand(ctx context.Context, p api.RunCommandParams) (api.RunCommandResult, error) {
	c := e.client()
	if !c.Capabilities().Terminal {
		return api.RunCommandResult{}, fmt.Errorf("%s: %w", acp.MethodTerminalCreate, api.ErrUnsupported)
	}
	id := e.s.book.call(ctx, "Run `"+oneLine(p.Command)+"`", acp.KindExecute)
	defer e.s.book.end(id, true)
	// ACP's env adds to the client's environment and cannot remove from
	// it: the secret variables are set empty.
	env := make([]acp.EnvVariable, len(p.UnsetEnv))
	for i, name := range p.UnsetEnv {
		env[i] = acp.EnvVariable{Name: name, Value: ""}
	}
	limit := int64(terminalOutput)
	shell, args := shellArgs(p.Command)
	// The terminal is asked for whatever becomes of ctx meanwhile: a cancel
	// that came while the client was creating it would leave the command
	// running in a terminal never released, whose id agentls never heard.
	// After a cancel its answer is waited for releaseTimeout at most.
	cctx, ccancel := context.WithCancel(context.WithoutCancel(ctx))
	defer ccancel()
	stopCreate := context.AfterFunc(ctx, func() { time.AfterFunc(releaseTimeout, ccancel) })
	terminalCreating(ctx)
	ct, err := c.CreateTerminal(cctx, &acp.CreateTerminalRequest{
		SessionID: e.s.id, Command: shell, Args: args, Env: env, Cwd: p.Cwd, OutputByteLimit: &limit,
	})
	stopCreate()
	if err != nil {
		if ctx.Err() != nil {
			return api.RunCommandResult{}, context.Cause(ctx)
		}
		return api.RunCommandResult{}, err
	}
	term := &acp.TerminalRequest{SessionID: e.s.id, TerminalID: ct.TerminalID}
	after := func(call func(context.Context, *acp.TerminalRequest) (*acp.Empty, error)) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer cancel()
		_, _ = call(rctx, term)
	}
	defer after(c.ReleaseTerminal)
	if ctx.Err() != nil {
		after(c.KillTerminal)
		return api.RunCommandResult{}, context.Cause(ctx)
	}
	e.s.book.add(id, acp.TerminalContent(ct.TerminalID), nil)

	wait := ctx
	if p.TimeoutMs > 0 {
		var cancel context.CancelFunc
		wait, cancel = context.WithTimeout(ctx, time.Duration(p.TimeoutMs)*time.Millisecond)
		defer cancel()
	}
	exit, err := c.WaitForTerminalExit(wait, term)
	timedOut := err != nil && ctx.Err() == nil && errors.Is(wait.Err(), context.DeadlineExceeded)
	if err != nil {
		after(c.KillTerminal)
		if !timedOut {
			return api.RunCommandResult{}, err
		}
	}
	octx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	out, err := c.TerminalOutput(octx, term)
	if err != nil {
		return api.RunCommandResult{}, err
	}
	res := api.RunCommandResult{Output: out.Output, TimedOut: timedOut, ExitCode: -1}
	if out.Truncated {
		res.Output = "[the start of the output was cut]\n" + res.Output
	}
	if exit == nil {
		exit = out.ExitStatus
	}
	if exit != nil && exit.ExitCode != nil {
		res.ExitCode = *exit.ExitCode
	}
	return res, nil
}
