package flow

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
)

// TestSupersteps: producers send three supersteps of records, each ended by
// an EndOfSuperstep event; a consumer in superstep mode reads each superstep
// "until EOF" (ErrEndOfSuperstep), and io.EOF once the producers ended. Every
// superstep holds exactly the records sent in it, at every batch size and
// with several producers (aligned).
func TestSupersteps(t *testing.T) {
	const steps, perStep = 3, 500
	for _, bs := range []int{1, 7, 1024} {
		for _, producers := range []int{1, 3} {
			t.Run(fmt.Sprintf("batch%d/producers%d", bs, producers), func(t *testing.T) {
				env := newTestEnv(t, budgets[0].opts)
				g := NewGraph()
				src := g.Vertex("head", producers, func(tc *TaskContext) error {
					w := Output[rec](tc, 0)
					for s := 1; s <= steps; s++ {
						for i := tc.Subtask; i < perStep; i += tc.Parallelism {
							r := rec{Key: int64(s), Seq: int64(i)}
							if err := w.Emit(&r); err != nil {
								return err
							}
						}
						if err := w.Event(Event{Kind: EndOfSuperstep, Value: int64(s)}); err != nil {
							return err
						}
					}
					return nil
				})
				var got [][]int64
				dst := g.Vertex("body", 1, func(tc *TaskContext) error {
					in := Input[rec](tc, 0)
					if err := in.Supersteps(); err != nil {
						return err
					}
					var cur []int64
					for {
						b, err := in.Next(tc.Context())
						switch {
						case errors.Is(err, ErrEndOfSuperstep):
							if _, err := in.Next(tc.Context()); !errors.Is(err, ErrEndOfSuperstep) {
								return fmt.Errorf("after the end of a superstep: %v", err)
							}
							got = append(got, cur)
							cur = nil
							in.NextSuperstep()
							continue
						case errors.Is(err, io.EOF):
							if len(cur) > 0 {
								return fmt.Errorf("records after the last superstep: %v", cur)
							}
							return nil
						case err != nil:
							return err
						}
						for _, r := range b {
							cur = append(cur, r.Key*1e6+r.Seq)
						}
					}
				})
				Connect(g, src, dst, Partitioner[rec]{Strategy: Rebalance}, Pipelined, nil)
				if _, err := Execute(bg, g, env.options(Options{BatchSize: bs})); err != nil {
					t.Fatal(err)
				}
				if len(got) != steps {
					t.Fatalf("got %d supersteps, want %d", len(got), steps)
				}
				for s, recs := range got {
					slices.Sort(recs)
					if len(recs) != perStep {
						t.Fatalf("superstep %d: %d records, want %d", s+1, len(recs), perStep)
					}
					for i, v := range recs {
						if want := int64(s+1)*1e6 + int64(i); v != want {
							t.Fatalf("superstep %d: record %d is %d, want %d", s+1, i, v, want)
						}
					}
				}
			})
		}
	}
}
