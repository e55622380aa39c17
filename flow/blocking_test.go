package flow

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
)

// TestBlockingWaitsForProducers: a blocking edge's consumer gets its first
// batch only after every producer's body returned, and under a tiny budget the
// exchange spills yet delivers exactly the input.
func TestBlockingWaitsForProducers(t *testing.T) {
	for _, dist := range []keyDist{uniformKeys, zipfKeys, equalKeys, bigRecords} {
		for _, bu := range budgets {
			t.Run(fmt.Sprintf("%s/%s", dist, bu.name), func(t *testing.T) {
				const nProd, nCons = 3, 2
				in := genInput(nProd, 5000, dist, 5)
				var finished atomic.Int32
				env := newTestEnv(t, bu.opts)
				g := NewGraph()
				src := g.Vertex("source", nProd, func(tc *TaskContext) error {
					if err := sourceBody(in)(tc); err != nil {
						return err
					}
					finished.Add(1)
					return nil
				})
				got := make([][]rec, nCons)
				dst := g.Vertex("sink", nCons, func(tc *TaskContext) error {
					r := Input[rec](tc, 0)
					for {
						b, err := r.Next(tc.Context())
						if errors.Is(err, io.EOF) {
							return nil
						}
						if err != nil {
							return err
						}
						if n := finished.Load(); n != nProd {
							return fmt.Errorf("consumer read while only %d of %d producers finished", n, nProd)
						}
						got[tc.Subtask] = append(got[tc.Subtask], b...)
					}
				})
				Connect(g, src, dst, Partitioner[rec]{Strategy: Hash, Hash: hashKey}, Blocking, recCodec(t))
				res, err := Execute(bg, g, env.options(Options{BatchSize: 128}))
				if err != nil {
					t.Fatal(err)
				}
				env.check(t)
				checkHash(t, in, got)
				s, _ := res.Vertex("source")
				if bu.name == "tiny" && s.Total().Spilled == 0 {
					t.Error("tiny budget: nothing spilled")
				}
				if s.Total().PeakMemory <= 0 {
					t.Error("no peak memory reported for the blocking output")
				}
				if bu.name == "unlimited" && s.Total().Spilled != 0 {
					t.Errorf("unlimited budget: %d bytes spilled", s.Total().Spilled)
				}
				if res.PeakMemory > bu.opts.Budget && bu.name == "tiny" {
					// spill writers and readers are forced past the budget; say by how much
					t.Logf("peak memory %d over budget %d (forced spill buffers)", res.PeakMemory, bu.opts.Budget)
				}
			})
		}
	}
}

// TestBlockingNeedsCodec: a blocking edge without a codec is an error at Execute.
func TestBlockingNeedsCodec(t *testing.T) {
	env := newTestEnv(t, budgets[0].opts)
	g := NewGraph()
	a := g.Vertex("a", 1, func(tc *TaskContext) error { return nil })
	b := g.Vertex("b", 1, func(tc *TaskContext) error { return nil })
	Connect[rec](g, a, b, Partitioner[rec]{Strategy: Forward}, Blocking, nil)
	_, err := Execute(bg, g, env.options(Options{}))
	if err == nil {
		t.Fatal("no error")
	}
	env.check(t)
}
