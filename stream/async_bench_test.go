package stream

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/internal/core"
	"github.com/weirdata/weir/stream/internal/op"
	"github.com/weirdata/weir/stream/internal/task"
)

// openAsyncOp returns an async operator of capacity 100 whose function
// completes each call at once with one shared result, into a sink that
// counts, opened on a runtime outside a job.
func openAsyncOp(tb testing.TB, ordered bool, count *int) *op.Async[int64, int64] {
	one := []int64{1}
	fns := op.AsyncFns[int64, int64]{Invoke: func(_ context.Context, _ int64, f op.Future[int64]) { f.Complete(one) }}
	rt := task.New(nil, task.Config{}, 0, 1, nil)
	sink := &op.Sink[int64]{Write: func(b []core.Record[int64]) error {
		*count += len(b)
		return nil
	}}
	a := op.NewAsync(fns, op.AsyncConfig[int64]{Ordered: ordered, Timeout: time.Minute, Capacity: DefaultAsyncCapacity}, sink, 1024)
	rt.AddOperator(sink, "sink", "Sink")
	rt.AddOperator(a, "async", "AsyncWait")
	if err := rt.Open(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := rt.Close(); err != nil {
			tb.Error(err)
		}
	})
	return a
}

func recordBatch(n int) []Record[int64] {
	b := make([]Record[int64], n)
	for i := range b {
		b[i] = Record[int64]{Value: int64(i), Timestamp: int64(i)}
	}
	return b
}

// BenchmarkAsyncWait is the cost per record of an async call through
// OrderedWait's and UnorderedWait's operator: a function that completes
// each call at once, capacity 100, 1,024-record batches.
func BenchmarkAsyncWait(b *testing.B) {
	recs := recordBatch(1024)
	for _, ordered := range []bool{true, false} {
		b.Run(fmt.Sprint("ordered=", ordered), func(b *testing.B) {
			var n int
			a := openAsyncOp(b, ordered, &n)
			b.ReportAllocs()
			for b.Loop() {
				if err := a.Push(recs); err != nil {
					b.Fatal(err)
				}
			}
			if err := a.EndInput(); err != nil {
				b.Fatal(err)
			}
			if n != b.N*len(recs) {
				b.Fatalf("%d records out, want %d", n, b.N*len(recs))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
		})
	}
}

// TestAsyncWaitAllocs: a batch through the async operator allocates
// nothing once its queue is made, and every record comes out.
func TestAsyncWaitAllocs(t *testing.T) {
	recs := recordBatch(1024)
	for _, ordered := range []bool{true, false} {
		var n int
		a := openAsyncOp(t, ordered, &n)
		if err := a.Push(recs); err != nil {
			t.Fatal(err)
		}
		if allocs := testing.AllocsPerRun(20, func() {
			if err := a.Push(recs); err != nil {
				t.Fatal(err)
			}
		}); allocs != 0 {
			t.Errorf("ordered=%v: %v allocations per batch", ordered, allocs)
		}
		if err := a.EndInput(); err != nil {
			t.Fatal(err)
		}
		if n != 22*len(recs) {
			t.Errorf("ordered=%v: %d records out, want %d", ordered, n, 22*len(recs))
		}
	}
}
