package flow

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestLifecycle: what a body registers runs when it returns, on every path:
// OnExit functions (and, in a task without supersteps, Keep's releases) last
// first, then OnEnd functions last first; Keep stores nothing outside
// supersteps (TestIteration covers them); a panicking cleanup becomes the
// task's error.
func TestLifecycle(t *testing.T) {
	boom := errors.New("boom")
	for _, c := range []struct {
		name    string
		end     func() error // how the body ends
		wantErr string
	}{
		{"success", func() error { return nil }, ""},
		{"error", func() error { return boom }, "boom"},
		{"panic", func() error { panic("body") }, "panic"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := newTestEnv(t, budgets[0].opts)
			var order []string
			g := NewGraph()
			g.Vertex("v", 1, func(tc *TaskContext) error {
				tc.OnEnd(func() { order = append(order, "end1") })
				tc.OnExit(func() { order = append(order, "exit1") })
				tc.Keep("k", 7, func() { order = append(order, "release") })
				tc.OnExit(func() { order = append(order, "exit2") })
				if tc.Kept("k") != nil {
					return fmt.Errorf("Kept = %v outside supersteps", tc.Kept("k"))
				}
				return c.end()
			})
			_, err := Execute(bg, g, env.options(Options{}))
			env.check(t)
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("got %v, want %q", err, c.wantErr)
			}
			if got, want := strings.Join(order, " "), "exit2 release exit1 end1"; got != want {
				t.Fatalf("ran %q, want %q", got, want)
			}
		})
	}
	t.Run("cleanup panics", func(t *testing.T) {
		env := newTestEnv(t, budgets[0].opts)
		g := NewGraph()
		g.Vertex("v", 1, func(tc *TaskContext) error {
			tc.OnExit(func() { panic("cleanup") })
			return nil
		})
		_, err := Execute(bg, g, env.options(Options{}))
		env.check(t)
		if !errors.Is(err, ErrPanic) || !strings.Contains(err.Error(), "cleanup") {
			t.Fatalf("got %v, want the cleanup's panic", err)
		}
	})
}
