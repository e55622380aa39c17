package flow

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// infiniteSource emits records until its writer fails (the job was cancelled).
func infiniteSource(tc *TaskContext) error {
	w := Output[rec](tc, 0)
	for i := int64(0); ; i++ {
		if err := w.Emit(&rec{Key: i % 1000, Seq: i}); err != nil {
			return err
		}
	}
}

// TestCancelDuringBackpressure: the consumer stops reading, the producers block
// on full channels, the caller cancels: Execute returns context.Canceled
// promptly and leaves nothing behind.
func TestCancelDuringBackpressure(t *testing.T) {
	for _, mode := range []ExchangeMode{Pipelined, Blocking} {
		t.Run(mode.String(), func(t *testing.T) {
			env := newTestEnv(t, budgets[1].opts)
			ctx, cancel := context.WithCancel(bg)
			defer cancel()
			var spilled atomic.Bool
			g := NewGraph()
			src := g.Vertex("source", 2, func(tc *TaskContext) error {
				w := Output[rec](tc, 0)
				for i := int64(0); ; i++ {
					if err := w.Emit(&rec{Key: i % 1000, Seq: i}); err != nil {
						return err
					}
					// a blocking edge never fills a channel: cancel once it spilled
					if mode == Blocking && i == 20000 {
						spilled.Store(tc.Metrics.spilled.Load() > 0)
						cancel()
					}
				}
			})
			dst := g.Vertex("sink", 2, func(tc *TaskContext) error {
				r := Input[rec](tc, 0)
				if _, err := r.Next(tc.Context()); err != nil {
					return err
				}
				cancel() // the producers are, or will be, blocked on backpressure
				<-tc.Context().Done()
				return tc.Context().Err()
			})
			Connect(g, src, dst, Partitioner[rec]{Strategy: Hash, Hash: hashKey}, mode, recCodec(t))
			var err error
			within(t, 10*time.Second, func() { _, err = Execute(ctx, g, env.options(Options{BatchSize: 64})) })
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want context.Canceled", err)
			}
			if !strings.HasPrefix(err.Error(), "flow: job canceled") {
				t.Errorf("error %q", err)
			}
			if mode == Blocking && !spilled.Load() {
				t.Error("blocking source had not spilled when cancelled")
			}
			env.check(t)
		})
	}
}

// TestPanicBecomesError: a panicking body fails the job with an error naming
// the vertex and subtask and holding the panic value; the other tasks (an
// endless source) stop.
func TestPanicBecomesError(t *testing.T) {
	env := newTestEnv(t, budgets[0].opts)
	g := NewGraph()
	src := g.Vertex("source", 2, infiniteSource)
	dst := g.Vertex("boom", 3, func(tc *TaskContext) error {
		r := Input[rec](tc, 0)
		if _, err := r.Next(tc.Context()); err != nil {
			return err
		}
		if tc.Subtask == 1 {
			var m map[string]int
			m["x"]++ // nil map: panics
		}
		for {
			if _, err := r.Next(tc.Context()); err != nil {
				return err
			}
		}
	})
	Connect(g, src, dst, Partitioner[rec]{Strategy: Rebalance}, Pipelined, nil)
	var err error
	within(t, 10*time.Second, func() { _, err = Execute(bg, g, env.options(Options{})) })
	if !errors.Is(err, ErrPanic) {
		t.Fatalf("got %v, want ErrPanic", err)
	}
	msg := err.Error()
	for _, want := range []string{`flow: vertex "boom" subtask 2/3`, "assignment to entry in nil map", "failure_test.go"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	env.check(t)
}

// TestErrorCancelsOthers: one consumer subtask fails; the endless producers and
// the other consumers stop, and the error names the failing subtask.
func TestErrorCancelsOthers(t *testing.T) {
	bad := errors.New("bad record")
	for _, mode := range []ExchangeMode{Pipelined, Blocking} {
		t.Run(mode.String(), func(t *testing.T) {
			env := newTestEnv(t, budgets[1].opts)
			g := NewGraph()
			var src *Vertex
			if mode == Pipelined {
				src = g.Vertex("source", 2, infiniteSource)
			} else {
				src = g.Vertex("source", 2, sourceBody(genInput(2, 5000, uniformKeys, 1)))
			}
			dst := g.Vertex("check", 2, func(tc *TaskContext) error {
				r := Input[rec](tc, 0)
				for {
					if _, err := r.Next(tc.Context()); err != nil {
						if errors.Is(err, io.EOF) {
							<-tc.Context().Done() // wait to be cancelled by the other subtask
							return tc.Context().Err()
						}
						return err
					}
					if tc.Subtask == 0 {
						return bad
					}
				}
			})
			Connect(g, src, dst, Partitioner[rec]{Strategy: Hash, Hash: hashKey}, mode, recCodec(t))
			var err error
			var res *Result
			within(t, 10*time.Second, func() { res, err = Execute(bg, g, env.options(Options{})) })
			if !errors.Is(err, bad) || !strings.Contains(err.Error(), `flow: vertex "check" subtask 1/2: bad record`) {
				t.Fatalf("got %v", err)
			}
			if res == nil || len(res.Vertices) != 2 {
				t.Fatalf("no partial metrics: %+v", res)
			}
			env.check(t)
		})
	}
}

// TestGraphErrors: problems found before running are returned by Execute.
func TestGraphErrors(t *testing.T) {
	noop := func(tc *TaskContext) error { return nil }
	cases := []struct {
		name  string
		build func(g *Graph)
		want  string
	}{
		{"parallelism", func(g *Graph) { g.Vertex("a", 0, noop) }, "parallelism 0"},
		{"forward", func(g *Graph) {
			Connect(g, g.Vertex("a", 2, noop), g.Vertex("b", 1, noop), Partitioner[rec]{Strategy: Forward}, Pipelined, nil)
		}, "FORWARD needs equal parallelism"},
		{"hash", func(g *Graph) {
			Connect(g, g.Vertex("a", 1, noop), g.Vertex("b", 1, noop), Partitioner[rec]{Strategy: Hash}, Pipelined, nil)
		}, "without a Hash"},
		{"bounds", func(g *Graph) {
			Connect(g, g.Vertex("a", 1, noop), g.Vertex("b", 3, noop), Partitioner[rec]{Strategy: Range, Key: keyOf, Bounds: [][]byte{{1}}}, Pipelined, nil)
		}, "1 bounds for 3 consumers"},
		{"sampled-codec", func(g *Graph) {
			Connect(g, g.Vertex("a", 1, noop), g.Vertex("b", 3, noop), Partitioner[rec]{Strategy: Range, Key: keyOf}, Pipelined, nil)
		}, "needs a codec"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGraph()
			tc.build(g)
			_, err := Execute(bg, g, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestRuntimeErrors: a custom partitioner out of range and an input read with
// the wrong type fail their task.
func TestRuntimeErrors(t *testing.T) {
	t.Run("custom", func(t *testing.T) {
		env := newTestEnv(t, budgets[0].opts)
		g := NewGraph()
		src := g.Vertex("source", 1, sourceBody(genInput(1, 10, uniformKeys, 1)))
		dst := g.Vertex("sink", 2, newCollector(2).body)
		Connect(g, src, dst, Partitioner[rec]{Strategy: Custom, Custom: func(*rec, int) int { return 2 }}, Pipelined, nil)
		_, err := Execute(bg, g, env.options(Options{}))
		if err == nil || !strings.Contains(err.Error(), "custom partitioner returned 2 for 2 consumers") {
			t.Fatalf("got %v", err)
		}
		env.check(t)
	})
	t.Run("type", func(t *testing.T) {
		env := newTestEnv(t, budgets[0].opts)
		g := NewGraph()
		src := g.Vertex("source", 1, sourceBody(genInput(1, 10, uniformKeys, 1)))
		dst := g.Vertex("sink", 1, func(tc *TaskContext) error {
			Input[int64](tc, 0)
			return nil
		})
		Connect(g, src, dst, Partitioner[rec]{Strategy: Forward}, Pipelined, nil)
		_, err := Execute(bg, g, env.options(Options{}))
		if !errors.Is(err, ErrPanic) || !strings.Contains(err.Error(), "not a *flow.Reader[int64]") {
			t.Fatalf("got %v", err)
		}
		env.check(t)
	})
}
