package bench

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
	"github.com/weirdata/weir/stream/window"
)

// weir's window operator on the hand loops' events (window_test.go): a
// bounded generator source at parallelism streamWorkers with monotonous
// timestamps (each reader's range rises), KeyBy(Key), a window assigner
// and WindowAggregate summing Value (one accumulator per key and window),
// into a counting sink. Run next to the hand loops:
//
//	go test ./bench -run '^$' -bench 'Window' -count 3
//
// The sources ask their watermark every windowWatermarkInterval
// (Flink's setAutoWatermarkInterval) instead of the default 200 ms: the
// generator replays about 100 s of event time in a second, so a 200 ms
// interval would hold some 20 windows open behind the watermark, where the
// hand loops advance theirs after every batch.

// windowWatermarkInterval is the window benchmarks' watermark interval.
const windowWatermarkInterval = 10 * time.Millisecond

// tevSum sums Value, keeping the key.
type tevSum struct{}

func (tevSum) CreateAccumulator() tev { return tev{} }
func (tevSum) Add(e tev, acc tev) tev { acc.Key = e.Key; acc.Value += e.Value; return acc }
func (tevSum) GetResult(acc tev) tev  { return acc }
func (tevSum) Merge(a, b tev) tev     { a.Value += b.Value; return a }

// windowJob adds the job: sums per key and window of size and slide.
func windowJob(env *stream.Env, n int64, gen func(int64) tev, size, slide time.Duration) (stream.DataStream[tev], error) {
	src := stream.FromSource(env, source.Generator(gen, n, 0),
		watermark.ForMonotonousTimestamps[tev]().WithTimestampAssigner(func(e tev, _ int64) int64 { return e.TS }), "events")
	var a window.Assigner[window.TimeWindow]
	if size == slide {
		a = window.TumblingEventTimeWindows(size)
	} else {
		a = window.SlidingEventTimeWindows(size, slide)
	}
	if err := window.Err(a); err != nil {
		return stream.DataStream[tev]{}, err
	}
	return stream.WindowAggregate(stream.Window(stream.KeyBy(src, func(e tev) int64 { return e.Key }), a), tevSum{}), nil
}

// runWindowJob runs it with the memory budget given (0: the default) and
// returns the sums per key and window, from the results' timestamps.
func runWindowJob(tb testing.TB, n int64, gen func(int64) tev, size, slide time.Duration, memory int64) map[winKey]int64 {
	env := stream.New(stream.Options{Parallelism: streamWorkers, Mode: stream.Streaming, Memory: memory, AutoWatermarkInterval: windowWatermarkInterval})
	out, err := windowJob(env, n, gen, size, slide)
	if err != nil {
		tb.Fatal(err)
	}
	got := stream.Collect(out)
	if _, err := env.Execute(context.Background()); err != nil {
		tb.Fatal(err)
	}
	m := map[winKey]int64{}
	for _, r := range got.Records() {
		m[winKey{r.Value.Key, r.Timestamp + 1 - size.Milliseconds()}] += r.Value.Value
	}
	return m
}

// TestWeirWindowMatchesOracle checks weir's tumbling and sliding sums
// against the sequential oracle.
func TestWeirWindowMatchesOracle(t *testing.T) {
	if testing.Short() {
		t.Skip("a benchmark-sized job: the plain test run checks it")
	}
	for _, c := range []struct{ n, size, slide, rate int64 }{{200_000, 1000, 1000, 50_000}, {40_000, 60_000, 1000, 2_000}} {
		n := c.n
		gen := windowEvent(n, c.rate)
		got := runWindowJob(t, n, gen, time.Duration(c.size)*time.Millisecond, time.Duration(c.slide)*time.Millisecond, 0)
		equalWindowSums(t, "weir", got, oracleWindowSums(n, gen, c.size, c.slide))
	}
}

// TestWeirWindowMemoryPerWindow runs the tumbling job in a 24 MiB budget
// with 10 and 200 events per key and window (the same number of windows):
// the incremental sum keeps one accumulator per key and open window, so
// both fit; the results match the oracle.
func TestWeirWindowMemoryPerWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("a benchmark-sized job: the plain test run checks it")
	}
	for _, perKey := range []int64{10, 200} {
		rate := perKey * streamKeys
		n := 4 * rate // four 1 s windows
		gen := windowEvent(n, rate)
		got := runWindowJob(t, n, gen, time.Second, time.Second, 24<<20)
		equalWindowSums(t, "weir in 24 MiB", got, oracleWindowSums(n, gen, 1000, 1000))
	}
}

func BenchmarkWindowTumbling(b *testing.B) {
	n := streamEvents(b) &^ 1
	benchWindow(b, n, windowEvent(n, windowEventsPerSecond(b, 200_000)), time.Second, time.Second)
}

func BenchmarkWindowSliding(b *testing.B) {
	n := streamEvents(b) &^ 1
	benchWindow(b, n, windowEvent(n, windowEventsPerSecond(b, 20_000)), time.Minute, time.Second)
}

func benchWindow(b *testing.B, n int64, gen func(int64) tev, size, slide time.Duration) {
	var count, xor atomic.Int64
	for b.Loop() {
		count.Store(0)
		env := stream.New(stream.Options{Parallelism: streamWorkers, Mode: stream.Streaming, AutoWatermarkInterval: windowWatermarkInterval})
		out, err := windowJob(env, n, gen, size, slide)
		if err != nil {
			b.Fatal(err)
		}
		countSink(out, func(e tev) int64 { return e.Value }, &count, &xor)
		if _, err := env.Execute(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(count.Load()), "windows")
	reportEvents(b, n)
}
