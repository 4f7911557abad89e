package runner

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
)

// controlsHelp is what a person at the terminal may type while a run is
// live (each line ends with Enter).
const controlsHelp = "type s ID to skip a subtask, r ID to remove a pending one, a TEXT (or a after ID,ID: TEXT) to add one, q to stop; then Enter"

// controlTimeout bounds the server's answer to one control.
const controlTimeout = 10 * time.Second

// control is one line typed while the run is live.
type control struct {
	method string // api.MethodSkipSubtask, …; "" asks for the help
	id     string // the subtask of skip and remove
	text   string // the content of add
	after  []string
}

// parseControl reads a control: "s 2" or "skip 2", "r 3" or "remove 3",
// "a TEXT" or "add TEXT", with "after 1,2:" before TEXT for its
// dependencies, "q" or "stop", and "?", "h" or "help".
func parseControl(line string) (control, error) {
	word, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	rest = strings.TrimSpace(rest)
	id := func(what string) (control, error) {
		m := map[string]string{"skip": api.MethodSkipSubtask, "remove": api.MethodRemoveSubtask}[what]
		if rest == "" || strings.ContainsAny(rest, " \t") {
			return control{}, fmt.Errorf("%s takes one subtask id, e.g. %s 2", what, what[:1])
		}
		return control{method: m, id: rest}, nil
	}
	switch strings.ToLower(word) {
	case "s", "skip":
		return id("skip")
	case "r", "remove":
		return id("remove")
	case "a", "add":
		c := control{method: api.MethodAddSubtask, text: rest}
		if after, ok := strings.CutPrefix(rest, "after "); ok {
			deps, text, found := strings.Cut(after, ":")
			if !found {
				return control{}, fmt.Errorf("add after takes the subtask ids, a colon and the text, e.g. a after 1,2: update the README")
			}
			for _, d := range strings.FieldsFunc(deps, func(r rune) bool { return r == ',' || r == ' ' }) {
				c.after = append(c.after, d)
			}
			c.text = strings.TrimSpace(text)
		}
		if c.text == "" {
			return control{}, fmt.Errorf("add takes what the new subtask is to do, e.g. a update the README")
		}
		return c, nil
	case "q", "stop":
		return control{method: api.MethodStop}, nil
	case "?", "h", "help":
		return control{}, nil
	}
	return control{}, fmt.Errorf("%q is not a command", strings.TrimSpace(line))
}

// controls is the run's handling of the lines typed while it is live: one
// goroutine, owned by the run, takes them one at a time.
type controls struct {
	lines  chan string
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// startControls lets a person at the terminal steer the task taskID while
// it runs: a line typed while no question waits is a control (s, r, a, q),
// sent to the server and its answer told on stderr; stop stops the task.
// Without a person at the terminal it does nothing. The returned function
// ends the controls and waits for the last one to be answered; lines typed
// afterwards are dropped.
func (u *ui) startControls(ed *headless.Editor, taskID string, stop func()) func() {
	if !u.o.Interactive || u.in == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &controls{lines: make(chan string, 16), cancel: cancel, done: make(chan struct{})}
	u.in.setIdle(func(line string) {
		u.typed.Add(1) // the terminal echoed it below the tree
		select {
		case c.lines <- line:
		default: // a burst of typing the server has not caught up with
		}
	})
	u.setControls(true)
	u.in.begin()
	go func() {
		defer close(c.done)
		for {
			select {
			case <-ctx.Done():
				return
			case line := <-c.lines:
				if strings.TrimSpace(line) != "" {
					u.control(ctx, ed, taskID, line, stop)
				}
			}
		}
	}()
	return func() {
		c.once.Do(func() {
			u.in.setIdle(nil)
			c.cancel()
			<-c.done
			u.setControls(false)
		})
	}
}

// caller is the part of the editor a control needs.
type caller interface {
	Call(ctx context.Context, method string, params, result any) error
}

// control carries out one line typed by the person and tells how it went.
func (u *ui) control(ctx context.Context, ed caller, taskID, line string, stop func()) {
	c, err := parseControl(line)
	if err != nil {
		u.note(err.Error() + "; " + controlsHelp)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, controlTimeout)
	defer cancel()
	switch c.method {
	case "":
		u.note(controlsHelp)
	case api.MethodStop:
		u.note("stopping…")
		stop()
	case api.MethodSkipSubtask:
		if err := ed.Call(ctx, c.method, api.SubtaskParams{TaskID: taskID, SubtaskID: c.id}, nil); err != nil {
			u.note(fmt.Sprintf("subtask %s not skipped: %s", c.id, forTerminal(err)))
			return
		}
		u.note(fmt.Sprintf("skipping subtask %s", c.id))
	case api.MethodRemoveSubtask:
		if err := ed.Call(ctx, c.method, api.SubtaskParams{TaskID: taskID, SubtaskID: c.id}, nil); err != nil {
			u.note(fmt.Sprintf("subtask %s not removed: %s", c.id, forTerminal(err)))
			return
		}
		u.note(fmt.Sprintf("removed subtask %s", c.id))
	case api.MethodAddSubtask:
		var res api.AddSubtaskResult
		if err := ed.Call(ctx, c.method, api.AddSubtaskParams{TaskID: taskID, Content: c.text, DependsOn: c.after}, &res); err != nil {
			u.note(fmt.Sprintf("subtask not added: %s", forTerminal(err)))
			return
		}
		msg := fmt.Sprintf("added subtask %s: %s", res.SubtaskID, c.text)
		if len(c.after) > 0 {
			msg += " (after " + strings.Join(c.after, ", ") + ")"
		}
		u.note(msg)
	}
}

// setControls says whether the controls are on: the live tree then shows
// how to use them, and a run without a live tree says it once.
func (u *ui) setControls(on bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.controls = on
	if on && !u.o.Live {
		fmt.Fprintln(u.o.Stderr, "agentls: "+controlsHelp)
	}
}
