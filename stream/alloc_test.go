package stream

import (
	"context"
	"runtime"
	"testing"

	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

// mallocsOf runs a bounded Map -> KeyBy -> Sum job over n generated records
// and returns the heap allocations it made.
func mallocsOf(t *testing.T, n int64) uint64 {
	env := New(Options{Parallelism: 2})
	gen := FromSource(env, source.Generator(func(i int64) int64 { return i }, n, 0), watermark.NoWatermarks[int64](), "generator")
	pairs := Map(gen, func(i int64) tuple3 { return tuple3{int(i % 64), 1, 0} })
	Sum(KeyBy(pairs, func(v tuple3) int { return v.F0 }), f1, setF1).Filter(func(tuple3) bool { return false })
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := env.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}

// TestSteadyStateAllocs: the allocations of a Map -> KeyBy -> Sum job do
// not grow with its records: the record path allocates nothing per record
// (batches are reused, state updates of known keys write in place).
func TestSteadyStateAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two jobs")
	}
	mallocsOf(t, 1000) // warm up
	small, large := mallocsOf(t, 100_000), mallocsOf(t, 400_000)
	perRecord := (float64(large) - float64(small)) / 300_000
	t.Logf("mallocs: %d for 100k records, %d for 400k", small, large)
	if perRecord > 0.01 {
		t.Fatalf("%.3f allocations per record in the steady state", perRecord)
	}
}
