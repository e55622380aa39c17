package flow

import (
	"errors"
	"io"
	"testing"
)

// transferGraph moves n int64 records from one producer to one consumer through
// a HASH edge, one Emit per record.
func transferGraph(n int, sum *int64) *Graph {
	g := NewGraph()
	src := g.Vertex("source", 1, func(tc *TaskContext) error {
		w := Output[int64](tc, 0)
		var v int64 // one variable: &v escapes once, not per record
		for i := int64(0); i < int64(n); i++ {
			v = i
			if err := w.Emit(&v); err != nil {
				return err
			}
		}
		return nil
	})
	dst := g.Vertex("sink", 1, func(tc *TaskContext) error {
		r := Input[int64](tc, 0)
		for {
			b, err := r.Next(tc.Context())
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			for _, v := range b {
				*sum += v
			}
		}
	})
	Connect(g, src, dst, Partitioner[int64]{Strategy: Hash, Hash: func(v *int64) uint64 { return uint64(*v) * 0x9e3779b97f4a7c15 }}, Pipelined, nil)
	return g
}

// TestSteadyStateAllocs: a job moving 64 times more records allocates about the
// same: the transfer allocates nothing per record and (with the batch free
// list) next to nothing per batch.
func TestSteadyStateAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation count")
	}
	env := newTestEnv(t, budgets[0].opts)
	opts := env.options(Options{BatchSize: 256, BufferTimeout: -1})
	run := func(n int) float64 {
		return testing.AllocsPerRun(5, func() {
			var sum int64
			if _, err := Execute(bg, transferGraph(n, &sum), opts); err != nil {
				t.Fatal(err)
			}
			if want := int64(n) * int64(n-1) / 2; sum != want {
				t.Fatalf("sum %d, want %d", sum, want)
			}
		})
	}
	small, large := run(1<<12), run(1<<18)
	extraBatches := float64(1<<18-1<<12) / 256
	perBatch := (large - small) / extraBatches
	t.Logf("allocs per job: %.0f with 4096 records, %.0f with 262144; %.4f per extra batch", small, large, perBatch)
	if perBatch > 0.1 {
		t.Fatalf("%.3f allocations per batch in the steady state", perBatch)
	}
	env.check(t)
}
