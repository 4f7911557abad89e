package editing

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless/headlesstest"
)

// heard records what the Changed hook was told.
type heard struct {
	mu  sync.Mutex
	got []string
}

func (h *heard) hook(rel, content string, deleted bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if deleted {
		h.got = append(h.got, rel+" deleted")
		return
	}
	h.got = append(h.got, rel+" = "+strings.TrimSpace(content))
}

func (h *heard) all() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := append([]string(nil), h.got...)
	sort.Strings(out)
	return strings.Join(out, "; ")
}

func TestChangedHook(t *testing.T) {
	ctx := context.Background()
	t.Run("hears every change applied, with the text that landed", func(t *testing.T) {
		e := newEnv(t, api.Caps{}, api.EditApply, api.Zones{}, map[string]string{"a.txt": "one\n", "b.txt": "bee\n"})
		h := &heard{}
		e.ws.changed = h.hook
		a := e.ws.Task("t1", "x", api.EditApply).Agent("1")
		for _, p := range []string{"a.txt", "b.txt"} {
			if _, err := a.Read(ctx, p, 0, 0); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := a.Write(ctx, "a.txt", "two\n"); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Delete(ctx, "b.txt"); err != nil {
			t.Fatal(err)
		}
		if got := h.all(); got != "a.txt = two; b.txt deleted" {
			t.Errorf("heard %q", got)
		}
	})
	for _, answer := range []string{actionApply, actionReject} {
		t.Run("hears a held change once reviewed, when it landed: "+answer, func(t *testing.T) {
			caps := headlesstest.AllCaps()
			caps.ChangeAnnotation = false
			e := newEnv(t, caps, api.EditApply, api.Zones{}, reviewFiles)
			h := &heard{}
			e.ws.changed = h.hook
			task, _ := holdAll(t, e)
			if got := h.all(); got != "" {
				t.Fatalf("held changes were told before the review: %q", got)
			}
			e.ed.SetAnswer(answer)
			task.Review(ctx, "agentls: review")
			want := ""
			if answer == actionApply {
				want = "a.txt = " + strings.TrimSpace(reviewA) + "; b.txt = beta = 2; dir/new.txt = fresh; old.txt deleted"
			}
			if got := h.all(); got != want {
				t.Errorf("heard %q, want %q", got, want)
			}
		})
	}
}
