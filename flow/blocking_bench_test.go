package flow

import (
	"errors"
	"io"
	"testing"

	"github.com/weirdata/weir/memory"
)

// BenchmarkBlockingSpill moves b.N int64 records through a blocking HASH edge
// from 2 producer subtasks to 2 consumer subtasks under the tiny budget, so
// that the stores spill and replay their files, and reports records per
// second.
func BenchmarkBlockingSpill(b *testing.B) {
	env := newTestEnv(b, budgets[1].opts)
	n := int64(b.N)
	codec, err := memory.NewCodec[int64]()
	if err != nil {
		b.Fatal(err)
	}
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
	var sum [2]int64
	dst := g.Vertex("sink", 2, func(tc *TaskContext) error {
		r := Input[int64](tc, 0)
		for {
			batch, err := r.Next(tc.Context())
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			for _, v := range batch {
				sum[tc.Subtask] += v
			}
		}
	})
	hash := func(v *int64) uint64 { return memory.HashUint64(uint64(*v), 1) }
	Connect(g, src, dst, Partitioner[int64]{Strategy: Hash, Hash: hash}, Blocking, codec)
	b.ReportAllocs()
	b.ResetTimer()
	res, err := Execute(bg, g, env.options(Options{}))
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if got, want := sum[0]+sum[1], n*(n-1)/2; got != want {
		b.Fatalf("records sum to %d, want %d", got, want)
	}
	if res.Vertices[0].Total().Spilled == 0 && n > 100000 {
		b.Fatalf("nothing spilled")
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
	env.check(b)
}
