package editing

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless/headlesstest"
)

func TestRevertLinesKeepsWhatChangedElsewhere(t *testing.T) {
	cases := []struct {
		name                     string
		before, after, cur, want string
		conflict                 string // the conflicting lines, "" for none
	}{
		{"restores the text when nothing changed since", "a\nb\nc\n", "a\nB\nc\n", "a\nB\nc\n", "a\nb\nc\n", ""},
		{"keeps a line changed since elsewhere", "a\nb\nc\nd\n", "a\nB\nc\nd\n", "a\nB\nc\nD\n", "a\nb\nc\nD\n", ""},
		{"keeps lines inserted since above the change", "a\nb\nc\n", "a\nB\nc\n", "x\ny\na\nB\nc\n", "x\ny\na\nb\nc\n", ""},
		{"keeps lines inserted since right before the change", "a\nb\nc\n", "a\nB\nc\n", "a\nx\nB\nc\n", "a\nx\nb\nc\n", ""},
		{"keeps lines inserted since right after the change", "a\nb\nc\n", "a\nB\nc\n", "a\nB\nx\nc\n", "a\nb\nx\nc\n", ""},
		{"puts back deleted lines", "a\nb\nc\n", "a\nc\n", "a\nc\nd\n", "a\nb\nc\nd\n", ""},
		{"takes inserted lines out", "a\nc\n", "a\nb\nc\n", "z\na\nb\nc\n", "z\na\nc\n", ""},
		{"refuses when the changed line was changed since", "a\nb\nc\n", "a\nB\nc\n", "a\nBB\nc\n", "", "[{2 2}]"},
		{"refuses lines inserted since inside the change", "a\nb\nc\nd\n", "a\nB\nC\nd\n", "a\nB\nx\nC\nd\n", "", "[{3 3}]"},
		{"keeps lines inserted since beside lines the change inserted", "a\nc\n", "a\nb\nc\n", "a\nx\nb\nc\n", "a\nx\nc\n", ""},
		{"refuses lines inserted since where the change deleted some", "a\nb\nc\n", "a\nc\n", "a\nx\nc\n", "", "[{2 2}]"},
		{"takes nothing back twice", "a\nb\nc\n", "a\nB\nc\n", "a\nb\nc\nd\n", "a\nb\nc\nd\n", ""},
		{"refuses when the changed lines were deleted since", "a\nb\nc\n", "a\nB\nc\n", "a\nc\n", "", "[{1 1}]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, conflicts := revertLines(c.cur, c.after, c.before)
			if c.conflict != "" {
				if fmt.Sprint(conflicts) != c.conflict {
					t.Fatalf("conflicts %v, want %s (result %q)", conflicts, c.conflict, got)
				}
				return
			}
			if len(conflicts) > 0 || got != c.want {
				t.Fatalf("revert = %q, %v; want %q", got, conflicts, c.want)
			}
		})
	}
}

// TestRevertLinesOnRandomTexts builds texts of segments that the task
// changed, segments changed since, and untouched lines between them: taking
// the task's changes back must give each segment the task changed its old
// text and keep every segment changed since; changing a line the task
// wrote must refuse.
func TestRevertLinesOnRandomTexts(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	uniq := 0
	lines := func(n int) string {
		var sb strings.Builder
		for ; n > 0; n-- {
			uniq++
			fmt.Fprintf(&sb, "line %d %x\n", uniq, rng.Uint32())
		}
		return sb.String()
	}
	n := 500
	if testing.Short() {
		n = 100
	}
	for i := 0; i < n; i++ {
		var before, after, cur, want strings.Builder
		var taskWrote []string
		for k := rng.Intn(8) + 1; k > 0; k-- {
			keep := lines(1 + rng.Intn(2))
			for _, b := range []*strings.Builder{&before, &after, &cur, &want} {
				b.WriteString(keep)
			}
			switch rng.Intn(3) {
			case 0: // the task changed it
				old, new := lines(rng.Intn(3)), lines(rng.Intn(3))
				before.WriteString(old)
				after.WriteString(new)
				cur.WriteString(new)
				want.WriteString(old)
				if new != "" {
					taskWrote = append(taskWrote, new)
				}
			case 1: // the person changed it since
				old, new := lines(rng.Intn(3)), lines(rng.Intn(3))
				before.WriteString(old)
				after.WriteString(old)
				cur.WriteString(new)
				want.WriteString(new)
			}
		}
		end := lines(1)
		for _, b := range []*strings.Builder{&before, &after, &cur, &want} {
			b.WriteString(end)
		}
		got, conflicts := revertLines(cur.String(), after.String(), before.String())
		if len(conflicts) > 0 || got != want.String() {
			t.Fatalf("revert = %q, %v\nwant %q\nbefore %q\nafter %q\ncur %q", got, conflicts, want.String(), before.String(), after.String(), cur.String())
		}
		if len(taskWrote) == 0 {
			continue
		}
		// Someone rewrites a line the task wrote: refused.
		w := taskWrote[rng.Intn(len(taskWrote))]
		first := w[:strings.IndexByte(w, '\n')+1]
		changed := strings.Replace(cur.String(), first, "rewritten "+first, 1)
		if _, conflicts := revertLines(changed, after.String(), before.String()); len(conflicts) == 0 {
			t.Fatalf("a line the task wrote was changed since, and the revert went through\nafter %q\ncur %q", after.String(), changed)
		}
	}
}

func TestUndo(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{"a.txt": "one\ntwo\nthree\n", "new.txt": "created\n"}
	steps := []UndoFile{
		{Path: "a.txt", Steps: []UndoStep{{Before: "one\n2\nthree\n", Existed: true, After: "one\ntwo\nthree\n", Exists: true}}},
		{Path: "new.txt", Steps: []UndoStep{{After: "created\n", Exists: true}}},
		{Path: "gone.txt", Steps: []UndoStep{{Before: "was here\n", Existed: true}}},
	}
	for _, caps := range []struct {
		name string
		caps api.Caps
	}{{"through the editor", headlesstest.AllCaps()}, {"with its own writes", noApplyCaps()}} {
		t.Run("restores, deletes and recreates "+caps.name, func(t *testing.T) {
			e := newEnv(t, caps.caps, api.EditApply, api.Zones{}, files)
			out := e.ws.Undo(ctx, "undo t1", steps, false)
			for _, r := range out {
				if !r.Undone {
					t.Fatalf("%s = %+v", r.Path, r)
				}
			}
			if got := fmt.Sprint(out[0].Operation, " ", out[1].Operation, " ", out[2].Operation); got != "update delete create" {
				t.Errorf("operations %s", got)
			}
			if e.read(t, "a.txt") != "one\n2\nthree\n" || e.read(t, "gone.txt") != "was here\n" {
				t.Fatal("not restored")
			}
			if _, err := os.Stat(filepath.Join(e.root, "new.txt")); !os.IsNotExist(err) {
				t.Fatal("new.txt not deleted")
			}
			if caps.caps.ApplyEdit && len(e.ed.Applied()) == 0 {
				t.Error("nothing went through the editor")
			}
			// Again: everything is as it was.
			for _, r := range e.ws.Undo(ctx, "undo t1", steps, false) {
				if !r.Undone || r.Operation != "" || !strings.Contains(r.Reason, "already as it was") {
					t.Errorf("again: %s = %+v", r.Path, r)
				}
			}
		})
	}

	t.Run("refuses a file whose lines changed since, naming them, and undoes nothing else", func(t *testing.T) {
		e := newEnv(t, headlesstest.AllCaps(), api.EditApply, api.Zones{}, map[string]string{"a.txt": "one\nTWO!\nthree\n", "new.txt": "created\n"})
		out := e.ws.Undo(ctx, "undo t1", steps, false)
		if out[0].Undone || fmt.Sprint(out[0].Lines) != "[{2 2}]" || !strings.Contains(out[0].Reason, "a.txt: line 2 changed since the task wrote it") {
			t.Fatalf("a.txt = %+v", out[0])
		}
		for _, r := range out[1:] {
			if r.Undone || !strings.Contains(r.Reason, r.Path+": not undone, as another file could not be and the undo was not partial") {
				t.Errorf("%s = %+v", r.Path, r)
			}
		}
		if len(e.ed.Applied()) != 0 || e.read(t, "new.txt") != "created\n" {
			t.Fatal("something was undone")
		}
		t.Run("and undoes the rest when asked to (partial)", func(t *testing.T) {
			out := e.ws.Undo(ctx, "undo t1", steps, true)
			if out[0].Undone || !out[1].Undone || !out[2].Undone {
				t.Fatalf("partial = %+v", out)
			}
			if e.read(t, "a.txt") != "one\nTWO!\nthree\n" || e.read(t, "gone.txt") != "was here\n" {
				t.Fatal("partial undo went wrong")
			}
		})
	})

	t.Run("refuses a created file the person wrote in, and one whose text was not kept", func(t *testing.T) {
		e := newEnv(t, headlesstest.AllCaps(), api.EditApply, api.Zones{}, map[string]string{"new.txt": "created\nmine\n"})
		out := e.ws.Undo(ctx, "undo", []UndoFile{steps[1], {Path: "big.bin", Missing: "the file is larger than 4 MiB"}}, true)
		if out[0].Undone || !strings.Contains(out[0].Reason, "new.txt: line 2 changed since the task created the file") {
			t.Errorf("new.txt = %+v", out[0])
		}
		if out[1].Undone || !strings.Contains(out[1].Reason, "not kept (the file is larger than 4 MiB)") {
			t.Errorf("big.bin = %+v", out[1])
		}
		if e.read(t, "new.txt") != "created\nmine\n" {
			t.Fatal("new.txt changed")
		}
	})

	t.Run("takes back several changes of a file, newest first, around the person's", func(t *testing.T) {
		e := newEnv(t, headlesstest.AllCaps(), api.EditApply, api.Zones{}, map[string]string{"m.txt": "head\nA2\nmid\nB2\nmine\n"})
		out := e.ws.Undo(ctx, "undo", []UndoFile{{Path: "m.txt", Steps: []UndoStep{
			{Before: "head\nA\nmid\nB\n", Existed: true, After: "head\nA2\nmid\nB\n", Exists: true},
			{Before: "head\nA2\nmid\nB\n", Existed: true, After: "head\nA2\nmid\nB2\n", Exists: true},
		}}}, false)
		if !out[0].Undone || e.read(t, "m.txt") != "head\nA\nmid\nB\nmine\n" {
			t.Fatalf("undo = %+v; m.txt %q", out[0], e.read(t, "m.txt"))
		}
	})
}
