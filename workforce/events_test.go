package workforce

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/testkit"
)

// twoSubtasks plans "one" then "two" after it, each finished at once.
func twoSubtasks() *funcModel {
	return &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
		if req.Agent == clients.AgentCoordinator {
			return planOf(map[string]any{"id": "1", "content": "one"}, map[string]any{"id": "2", "content": "two", "dependsOn": []string{"1"}}), nil
		}
		return finish("did " + req.Agent), nil
	}}
}

func TestTaskEvents(t *testing.T) {
	n := &fakeEvents{}
	e, _ := newEngine(t, twoSubtasks(), n, nil)
	tok := api.NewProgressToken("mine")
	res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "do two things", TaskID: "t1", WorkDoneToken: tok}, settings())
	if err != nil {
		t.Fatal(err)
	}
	n.mu.Lock()
	evs := slices.Clone(n.events)
	n.mu.Unlock()

	t.Run("the start comes first, with the prompt, the model and the run's token", func(t *testing.T) {
		st := evs[0].Start
		if st == nil || st.Prompt != "do two things" || st.Model != "test:model" || st.Token == nil || *st.Token != *tok {
			t.Fatalf("first event %+v, start %+v", evs[0], st)
		}
		for _, ev := range evs[1:] {
			if ev.Start != nil {
				t.Errorf("a second start: %+v", ev)
			}
		}
	})
	t.Run("updates are numbered from 1 and the last says how the task ended", func(t *testing.T) {
		var seq uint64
		for _, ev := range evs[1:] {
			if ev.Update == nil {
				continue
			}
			if seq++; ev.Seq != seq {
				t.Fatalf("update %d has seq %d", seq, ev.Seq)
			}
		}
		last := evs[len(evs)-1]
		if !last.Final() || last.Update.Summary != res.Summary || last.State != api.TaskDone {
			t.Errorf("last event %+v, want the final stateChanged with the summary", last)
		}
		if slices.ContainsFunc(evs[:len(evs)-1], Event.Final) {
			t.Error("a final update before the last event")
		}
	})
	t.Run("progress rides on the updates of subtasks started and finished", func(t *testing.T) {
		var got []string
		for _, ev := range evs {
			if p := ev.Progress; p != nil {
				got = append(got, ev.Update.Kind+" "+ev.Update.SubtaskID)
				if p.Total != 2 {
					t.Errorf("progress %+v, want a total of 2", p)
				}
			}
		}
		want := []string{"subtaskStarted 1", "subtaskFinished 1", "subtaskStarted 2", "subtaskFinished 2"}
		if !slices.Equal(got, want) {
			t.Errorf("progress on %q, want %q", got, want)
		}
		for _, ev := range evs {
			if ev.Progress != nil && ev.Update.Kind == api.EventSubtaskStarted && ev.Update.SubtaskID == "2" {
				if p := ev.Progress; p.Done != 1 || !slices.Equal(p.Running, []string{"2"}) {
					t.Errorf("progress when 2 starts: %+v, want 1 done and 2 running", p)
				}
			}
		}
	})
}

// gateEvents holds a task's start until release is closed; it records
// whether any update came before.
type gateEvents struct {
	fakeEvents
	release chan struct{}
	started atomic.Bool
}

func (g *gateEvents) Event(ctx context.Context, ev Event) error {
	if ev.Start != nil {
		g.started.Store(true)
		select {
		case <-g.release:
		case <-ctx.Done():
		}
	}
	return g.fakeEvents.Event(ctx, ev)
}

func TestTheStartIsHandledBeforeTheTaskGoesOn(t *testing.T) {
	called := make(chan struct{}, 16)
	m := &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
		called <- struct{}{}
		if req.Agent == clients.AgentCoordinator {
			return planOf(map[string]any{"id": "1", "content": "one"}), nil
		}
		return finish("done"), nil
	}}
	g := &gateEvents{release: make(chan struct{})}
	e, _ := newEngine(t, m, &g.fakeEvents, nil)
	e.cfg.Events = g
	done := make(chan error, 1)
	go func() {
		_, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "x"}, settings())
		done <- err
	}()
	ctx := testkit.Context(t)
	for !g.started.Load() {
		select {
		case <-ctx.Done():
			t.Fatal("the start was never handed over")
		case <-called:
			t.Fatal("the model was called before the task's start was handed over")
		default:
		}
	}
	select {
	case <-called:
		t.Fatal("the model was called while the task's start was being handled")
	default:
	}
	close(g.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// panickyEvents panics on every update, as a bug in a face's translation.
type panickyEvents struct{}

func (panickyEvents) Event(_ context.Context, ev Event) error {
	if ev.Update != nil {
		panic("a bug in the face")
	}
	return nil
}

type panickyQueueing struct{ panickyEvents }

func (panickyQueueing) Queues() {}

func TestABugInTheFacesTranslationDoesNotEndTheTask(t *testing.T) {
	for name, ev := range map[string]Events{"through the outbox": panickyEvents{}, "handed over directly": panickyQueueing{}} {
		t.Run(name, func(t *testing.T) {
			e, _ := newEngine(t, twoSubtasks(), &fakeEvents{}, nil)
			e.cfg.Events = ev
			_, e.queues = ev.(Queueing)
			res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "x"}, settings())
			if err != nil || res.State != api.TaskDone {
				t.Fatalf("run = %+v, %v; want done", res, err)
			}
		})
	}
}
