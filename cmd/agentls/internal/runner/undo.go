package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
)

// UndoOptions are the flags and the surroundings of one `agentls undo`.
type UndoOptions struct {
	Workspace string // the workspace root
	TaskID    string // "": the most recent task of the workspace
	SubtaskID string
	SessionID string
	Partial   bool // undo the files that can be when others cannot
	JSON      bool // print the result as one JSON line

	Server []string // the command that runs `agentls serve`
	Env    []string
	Serve  headless.ServeFunc // in-process instead of Server

	Stdout, Stderr io.Writer
}

// Undo takes a task's changes back (agent/undo, docs/PROTOCOL.md §3) with
// agentls as its own editor on the real disk, prints what became of each
// file, and returns the exit code: ExitDone when everything is undone,
// ExitRefused when a file was refused (nothing is undone then, unless
// Partial), ExitFailed for an unknown task or a failure, ExitUsage for a bad
// flag.
func Undo(ctx context.Context, o UndoOptions) int {
	if fi, err := os.Stat(o.Workspace); err != nil || !fi.IsDir() {
		fmt.Fprintf(o.Stderr, "agentls undo: --workspace %s is not a directory\n", o.Workspace)
		return ExitUsage
	}
	var cmd []string
	if o.Serve == nil {
		cmd = append(append(cmd, o.Server...), "serve", "--log-level", "error")
	}
	startCtx, cancelStart := context.WithTimeout(ctx, 30*time.Second)
	ed, err := headless.Start(startCtx, headless.Options{
		Root:    o.Workspace,
		Command: cmd,
		Serve:   o.Serve,
		Env:     o.Env,
		Stderr:  o.Stderr,
		Caps: headless.Capabilities{ApplyEdit: true, DocumentChanges: true,
			ResourceOperations: []string{"create", "delete"}, ReadFile: true},
		ClientName: "agentls undo",
	})
	cancelStart()
	if err != nil {
		fmt.Fprintf(o.Stderr, "agentls undo: %s\n", forTerminal(err))
		return ExitFailed
	}
	defer ed.Close()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, _ = ed.Shutdown(sctx)
		cancel()
	}()

	p := api.UndoParams{TaskID: o.TaskID, SubtaskID: o.SubtaskID, SessionID: o.SessionID, Partial: o.Partial}
	if p.TaskID == "" {
		if p.TaskID, p.SessionID, err = lastTask(ctx, ed, o.SessionID); err != nil {
			fmt.Fprintf(o.Stderr, "agentls undo: %v\n", err)
			return ExitFailed
		}
		fmt.Fprintf(o.Stderr, "agentls undo: the most recent task is %s\n", p.TaskID)
	}
	var res api.UndoResult
	if err := ed.Call(ctx, api.MethodUndo, p, &res); err != nil {
		fmt.Fprintf(o.Stderr, "agentls undo: %s\n", forTerminal(err))
		var we *api.Error
		if errors.As(err, &we) && we.Code == api.CodeInvalidParams {
			return ExitUsage
		}
		return ExitFailed
	}
	printUndo(o, &res)
	if !res.Undone {
		return ExitRefused
	}
	return ExitDone
}

// lastTask returns the most recent task of the workspace (of the session,
// when one is given) and its session.
func lastTask(ctx context.Context, ed *headless.Editor, sessionID string) (string, string, error) {
	var list api.SessionsResult
	if err := ed.Call(ctx, api.MethodSessions, struct{}{}, &list); err != nil {
		return "", "", err
	}
	for _, se := range list.Sessions { // newest first
		if sessionID != "" && se.SessionID != sessionID {
			continue
		}
		if n := len(se.Tasks); n > 0 {
			return se.Tasks[n-1].TaskID, se.SessionID, nil
		}
	}
	if sessionID != "" {
		return "", "", fmt.Errorf("session %s has no task; agentls run lists its task id when it ends", sessionID)
	}
	return "", "", errors.New("this workspace has no task to undo; give one with --task")
}

func printUndo(o UndoOptions, res *api.UndoResult) {
	if o.JSON {
		b, _ := json.Marshal(struct {
			Result *api.UndoResult `json:"result"`
		}{res})
		fmt.Fprintf(o.Stdout, "%s\n", b)
		return
	}
	w := o.Stdout
	verdict := "undone"
	if !res.Undone {
		verdict = "NOT undone"
		for _, f := range res.Files {
			if f.Undone && f.Operation != "" {
				verdict = "undone in part"
			}
		}
	}
	fmt.Fprintf(w, "Task %s: %s\n", res.TaskID, verdict)
	for _, f := range res.Files {
		what := map[string]string{api.OpUpdate: "restored", api.OpCreate: "recreated", api.OpDelete: "deleted"}[f.Operation]
		switch {
		case f.Undone && f.Operation == "":
			fmt.Fprintf(w, "\n%s: already as it was\n", f.Path)
		case f.Undone:
			fmt.Fprintf(w, "\n%s: %s\n", f.Path, what)
			fmt.Fprint(w, f.Diff)
			if f.Diff != "" && !strings.HasSuffix(f.Diff, "\n") {
				fmt.Fprintln(w)
			}
		default:
			fmt.Fprintf(w, "\nNOT undone: %s\n", f.Reason)
		}
	}
	if !res.Undone && !o.Partial {
		fmt.Fprintln(o.Stderr, "agentls undo: nothing was undone, as some files could not be; --partial undoes the others")
	}
}
