package flow

import (
	"errors"
	"io"
	"testing"

	"github.com/weirdata/weir/memory"
)

// BenchmarkGateExchange is BenchmarkHashExchange's int64 case with consumers
// that read through their gate (Gate.Next, Reader.Batch), and reports records
// per second.
func BenchmarkGateExchange(b *testing.B) {
	env := newTestEnv(b, budgets[0].opts)
	n := int64(b.N)
	g := NewGraph()
	src := g.Vertex("source", 2, func(tc *TaskContext) error {
		w := Output[int64](tc, 0)
		var v int64
		for i := int64(tc.Subtask); i < n; i += 2 {
			v = i
			if err := w.Emit(&v); err != nil {
				return err
			}
		}
		return nil
	})
	dst := g.Vertex("sink", 2, func(tc *TaskContext) error {
		gate := tc.Gate()
		for {
			if _, err := gate.Next(tc.Context()); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
		}
	})
	Connect(g, src, dst, Partitioner[int64]{Strategy: Hash, Hash: func(v *int64) uint64 { return memory.HashUint64(uint64(*v), 1) }}, Pipelined, nil)
	b.ReportAllocs()
	b.ResetTimer()
	res, err := Execute(bg, g, env.options(Options{BufferTimeout: -1}))
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if got := res.Vertices[1].Total().RecordsIn; got != n {
		b.Fatalf("moved %d records of %d", got, n)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
	env.check(b)
}
