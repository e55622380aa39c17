package stream

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/weirdata/weir/metrics"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
	"github.com/weirdata/weir/stream/window"
)

// mallocsOf runs a bounded job over n generated records, mapped to
// tuples and handed to tail, and returns the heap allocations it made.
func mallocsOf(t *testing.T, n int64, tail func(DataStream[tuple3])) uint64 {
	env := New(Options{Parallelism: 2})
	gen := FromSource(env, source.Generator(func(i int64) int64 { return i }, n, 0), watermark.NoWatermarks[int64](), "generator")
	tail(Map(gen, func(i int64) tuple3 { return tuple3{int(i % 64), 1, 0} }))
	Discard(stream[tuple3](env, env.p.Nodes[len(env.p.Nodes)-1])) // every case ends in a Filter of tuple3

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := env.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}

// TestSteadyStateAllocs: the allocations of a job do not grow with its
// records: the record path allocates nothing per record (batches are
// reused, state updates of known keys write in place, collectors are
// handed to user functions without boxing).
func TestSteadyStateAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two jobs per case")
	}
	drop := func(tuple3) bool { return false }
	for _, c := range []struct {
		name string
		tail func(DataStream[tuple3])
	}{
		{"KeyBy-Sum", func(ds DataStream[tuple3]) {
			Sum(KeyBy(ds, func(v tuple3) int { return v.F0 }), f1, setF1).Filter(drop)
		}},
		{"Process", func(ds DataStream[tuple3]) {
			Process(ds, func() ProcessFunction[tuple3, tuple3] {
				return ProcessFunction[tuple3, tuple3]{ProcessElement: func(v tuple3, _ *Context, out Collector[tuple3]) error {
					out.Collect(v)
					return nil
				}}
			}).Filter(drop)
		}},
		{"RichMap-metrics", func(ds DataStream[tuple3]) {
			RichMap(ds, func() RichMapFunction[tuple3, tuple3] {
				var c *metrics.Counter
				var h *metrics.Histogram
				var m *metrics.Meter
				return RichMapFunction[tuple3, tuple3]{
					Open: func(rc *RuntimeContext) error {
						c, h, m = rc.MetricGroup().Counter("c"), rc.MetricGroup().Histogram("h", 100), rc.MetricGroup().Meter("m", 0)
						return nil
					},
					Map: func(v tuple3) (tuple3, error) {
						c.Inc()
						h.Update(int64(v.F0))
						m.MarkEvent()
						return v, nil
					},
				}
			}).Filter(drop)
		}},
		{"RichFlatMap-RichFilter", func(ds DataStream[tuple3]) {
			RichFlatMap(ds, func() RichFlatMapFunction[tuple3, tuple3] {
				return RichFlatMapFunction[tuple3, tuple3]{FlatMap: func(v tuple3, out Collector[tuple3]) error {
					out.Collect(v)
					return nil
				}}
			}).RichFilter(func() RichFilterFunction[tuple3] {
				return RichFilterFunction[tuple3]{Filter: func(tuple3) (bool, error) { return true, nil }}
			}).Filter(drop)
		}},
		{"KeyBy-KeyedProcess", func(ds DataStream[tuple3]) {
			KeyedProcess(KeyBy(ds, func(v tuple3) int { return v.F0 }), func() KeyedProcessFunction[int, tuple3, tuple3] {
				return KeyedProcessFunction[int, tuple3, tuple3]{ProcessElement: func(v tuple3, _ *KeyedContext[int], out Collector[tuple3]) error {
					out.Collect(v)
					return nil
				}}
			}).Filter(drop)
		}},
		{"KeyBy-Window-Reduce", func(ds DataStream[tuple3]) {
			a := window.TumblingProcessingTimeWindows(time.Hour)
			Window(KeyBy(ds, func(v tuple3) int { return v.F0 }), a).Reduce(func(x, y tuple3) tuple3 {
				x.F1 += y.F1
				return x
			}).Filter(drop)
		}},
		{"KeyBy-CountWindow-Sum", func(ds DataStream[tuple3]) {
			WindowSum(CountWindow(KeyBy(ds, func(v tuple3) int { return v.F0 }), 1000), f1, setF1).Filter(drop)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mallocsOf(t, 1000, c.tail) // warm up
			small, large := mallocsOf(t, 100_000, c.tail), mallocsOf(t, 400_000, c.tail)
			perRecord := (float64(large) - float64(small)) / 300_000
			t.Logf("mallocs: %d for 100k records, %d for 400k", small, large)
			if perRecord > 0.01 {
				t.Fatalf("%.3f allocations per record in the steady state", perRecord)
			}
		})
	}
}
