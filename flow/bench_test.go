package flow

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/weirdata/weir/memory"
)

// wide is a 100-byte record.
type wide struct {
	Key  int64
	Rest [92]byte
}

// BenchmarkHashExchange moves b.N records through a pipelined HASH edge from 2
// producer subtasks to 2 consumer subtasks, one Emit per record, and reports
// records per second.
func BenchmarkHashExchange(b *testing.B) {
	fillInt := func(i int64, v *int64) { *v = i }
	hashInt := func(v *int64) uint64 { return memory.HashUint64(uint64(*v), 1) }
	fillWide := func(i int64, v *wide) { v.Key = i; v.Rest[0] = byte(i) }
	hashWide := func(v *wide) uint64 { return memory.HashUint64(uint64(v.Key), 1) }
	// default: a flusher runs, so Emit takes the writer's mutex; noflush: it does not
	b.Run("int64", func(b *testing.B) { benchExchange(b, 0, fillInt, hashInt) })
	b.Run("int64/noflush", func(b *testing.B) { benchExchange(b, -1, fillInt, hashInt) })
	b.Run("wide100B", func(b *testing.B) { benchExchange(b, 0, fillWide, hashWide) })
	b.Run("wide100B/noflush", func(b *testing.B) { benchExchange(b, -1, fillWide, hashWide) })
}

func benchExchange[T any](b *testing.B, flush time.Duration, fill func(int64, *T), hash func(*T) uint64) {
	env := newTestEnv(b, budgets[0].opts)
	n := int64(b.N)
	g := NewGraph()
	src := g.Vertex("source", 2, func(tc *TaskContext) error {
		w := Output[T](tc, 0)
		var v T
		for i := int64(tc.Subtask); i < n; i += 2 {
			fill(i, &v)
			if err := w.Emit(&v); err != nil {
				return err
			}
		}
		return nil
	})
	dst := g.Vertex("sink", 2, func(tc *TaskContext) error {
		r := Input[T](tc, 0)
		for {
			if _, err := r.Next(tc.Context()); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
		}
	})
	Connect(g, src, dst, Partitioner[T]{Strategy: Hash, Hash: hash}, Pipelined, nil)
	b.ReportAllocs()
	b.ResetTimer()
	res, err := Execute(bg, g, env.options(Options{BufferTimeout: flush}))
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
