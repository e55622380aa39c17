package flow

import (
	"errors"
	"io"
	"testing"

	"github.com/weirdata/weir/memory"
)

// BenchmarkAlignerExchange moves b.N int64 records through a pipelined HASH
// edge from 2 producer subtasks to 2 consumer subtasks that read through an
// Aligner, each producer sending a Barrier after every 4096 of its records,
// and reports records per second.
func BenchmarkAlignerExchange(b *testing.B) {
	const every = 4096
	env := newTestEnv(b, budgets[0].opts)
	n := int64(b.N)
	g := NewGraph()
	src := g.Vertex("source", 2, func(tc *TaskContext) error {
		w := Output[int64](tc, 0)
		var k, v int64
		for i := int64(tc.Subtask); i < n; i += 2 {
			v = i
			if err := w.Emit(&v); err != nil {
				return err
			}
			if k++; k%every == 0 {
				if err := w.Event(Event{Kind: Barrier, Value: k / every}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	barriers := make([]int64, 2)
	dst := g.Vertex("sink", 2, func(tc *TaskContext) error {
		a := NewAligner(Input[int64](tc, 0))
		for {
			_, ev, err := a.Next(tc.Context())
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if ev != nil && ev.Kind == Barrier {
				barriers[tc.Subtask]++
			}
		}
	})
	hash := func(v *int64) uint64 { return memory.HashUint64(uint64(*v), 1) }
	Connect(g, src, dst, Partitioner[int64]{Strategy: Hash, Hash: hash}, Pipelined, nil)
	b.ReportAllocs()
	b.ResetTimer()
	res, err := Execute(bg, g, env.options(Options{}))
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if got := res.Vertices[1].Total().RecordsIn; got != n {
		b.Fatalf("moved %d records of %d", got, n)
	}
	// every consumer sees each barrier both producers sent, once aligned
	if want := (n + 1) / 2 / every; barriers[0] != want || barriers[1] != want {
		b.Fatalf("consumers saw %v barriers, want %d each", barriers, want)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
	env.check(b)
}
