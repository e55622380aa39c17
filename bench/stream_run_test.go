package bench

import (
	"testing"
)

// TestStreamBenchmarksRun runs each DataStream benchmark once over 20,000
// events: a benchmark that no longer runs (a program the API refuses, a
// count its checks reject) fails here, in the test suite, and not only
// when someone times it.
func TestStreamBenchmarksRun(t *testing.T) {
	t.Setenv("WEIR_STREAM_EVENTS", "20000")
	for name, f := range map[string]func(*testing.B){
		"StreamRollingSum":             BenchmarkStreamRollingSum,
		"StreamKeyedProcessValueState": BenchmarkStreamKeyedProcessValueState,
		"WindowTumbling":               BenchmarkWindowTumbling,
		"WindowSliding":                BenchmarkWindowSliding,
		"WindowCheckpointing":          BenchmarkWindowCheckpointing,
	} {
		failed := false
		testing.Benchmark(func(b *testing.B) {
			defer func() { failed = b.Failed() }() // b.Fatal ends f early
			f(b)
		})
		if failed {
			benchFailures.Lock()
			msgs := benchFailures.msgs
			benchFailures.msgs = nil
			benchFailures.Unlock()
			t.Errorf("Benchmark%s fails: %q", name, msgs)
		}
	}
}
