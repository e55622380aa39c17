package flow

import (
	"context"
	"errors"
	"io"
	"sort"
	"testing"
	"time"

	"github.com/weirdata/weir/clock"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TestTaskClock: a task waits for a processing-time timer of the job's clock
// (Options.Clock); the test moves the clock.Manual once the task waits, and
// the task emits the time it woke at. Without Options.Clock tasks read the
// system clock.
func TestTaskClock(t *testing.T) {
	c := clock.NewManual(epoch)
	g := NewGraph()
	src := g.Vertex("timer", 2, func(tc *TaskContext) error {
		clk := tc.Clock()
		tm := clk.Timer(clk.Now().Add(time.Duration(tc.Subtask+1) * time.Second))
		select {
		case v := <-tm.C():
			out := Output[int64](tc, 0)
			ms := v.Sub(epoch).Milliseconds()
			return out.Emit(&ms)
		case <-tc.Context().Done():
			tm.Stop()
			return tc.Context().Err()
		}
	})
	var got []int64
	sink := g.Vertex("sink", 1, func(tc *TaskContext) error {
		r := Input[int64](tc, 0)
		for {
			b, err := r.Next(tc.Context())
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			got = append(got, b...)
		}
	})
	Connect(g, src, sink, Partitioner[int64]{Strategy: Rebalance}, Pipelined, nil)
	jb, err := Start(bg, g, Options{Streaming: true, Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	if err := c.AwaitWaiting(ctx, 2); err != nil {
		t.Fatal(err)
	}
	c.Advance(1500 * time.Millisecond) // subtask 0's timer only
	if err := c.AwaitWaiting(ctx, 1); err != nil || c.Waiting() != 1 {
		t.Fatalf("after the first move %d timers wait (%v), want 1", c.Waiting(), err)
	}
	c.Advance(time.Second)
	if _, err := jb.Wait(); err != nil {
		t.Fatal(err)
	}
	sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
	if len(got) != 2 || got[0] != 1500 || got[1] != 2500 {
		t.Fatalf("tasks woke at %v ms, want [1500 2500]", got)
	}
	var tc TaskContext
	if _, ok := tc.Clock().(clock.System); !ok {
		t.Error("a task without a clock does not read the system clock")
	}
	if _, ok := (Options{}).EnsureDefaults().Clock.(clock.System); !ok {
		t.Error("Options' default clock is not the system clock")
	}
}
