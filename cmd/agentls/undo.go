package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agentls/agentls/cmd/agentls/internal/runner"
)

const undoUsage = `Usage: agentls undo [flags]

Takes back every change a task made (or one subtask of it), with agentls as its own
editor: each file the task changed gets its text from before the task, a file it
created is deleted, one it deleted is recreated. Lines changed since elsewhere in a
file are kept; a file whose changed lines were changed since is refused, naming the
lines, and then nothing is undone unless --partial. Without --task, the most recent
task of the workspace is undone. agentls run prints the id of its task.

Exit codes:
  0    undone (or already as it was)
  1    failed (no such task, or its checkpoints were not kept)
  2    usage error
  3    some files could not be undone

Flags:
`

// undoCmd is `agentls undo` (docs/WORKFORCE.md, agentls undo).
func undoCmd(args []string, stdout, stderr io.Writer) int {
	var o runner.UndoOptions
	fs := flag.NewFlagSet("undo", flag.ContinueOnError)
	usage := func(w io.Writer) {
		fmt.Fprint(w, undoUsage)
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.Workspace, "workspace", ".", "the workspace root")
	fs.StringVar(&o.TaskID, "task", "", "the task to undo (default: the most recent task of the workspace)")
	fs.StringVar(&o.SubtaskID, "subtask", "", "undo only this subtask of the task")
	fs.StringVar(&o.SessionID, "session", "", "the session of the task, when its id was used in several")
	fs.BoolVar(&o.Partial, "partial", false, "undo the files that can be when others cannot")
	fs.BoolVar(&o.JSON, "json", false, "print the result as one JSON line")
	if code, ok := parseFlags(fs, args, usage, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "agentls undo: unexpected argument %q\n", fs.Arg(0))
		usage(stderr)
		return runner.ExitUsage
	}
	if o.SubtaskID != "" && o.TaskID == "" {
		fmt.Fprintln(stderr, "agentls undo: --subtask needs --task")
		usage(stderr)
		return runner.ExitUsage
	}
	ws, err := filepath.Abs(o.Workspace)
	if err != nil {
		fmt.Fprintf(stderr, "agentls undo: --workspace: %v\n", err)
		return runner.ExitUsage
	}
	o.Workspace = ws
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "agentls undo: cannot find the agentls binary: %v\n", err)
		return runner.ExitFailed
	}
	o.Server, o.Env = []string{self}, os.Environ()
	o.Stdout, o.Stderr = stdout, stderr
	return runner.Undo(context.Background(), o)
}
