package stream_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/weirdata/weir/metrics"
	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/state"
)

// Each parallel instance of a function learns in Open which subtask it
// is, as Flink's getRuntimeContext() tells a RichMapFunction: here every
// subtask of a Map at parallelism 3 tags the words it maps.
func ExampleRuntimeContext() {
	env := stream.New(stream.Options{Parallelism: 3})
	words := stream.FromSlice(env, []string{"to", "be", "or", "not", "to", "be"})
	tagged := stream.RichMap(words.Rebalance(), func() stream.RichMapFunction[string, string] {
		var rc *stream.RuntimeContext
		return stream.RichMapFunction[string, string]{
			Open: func(c *stream.RuntimeContext) error {
				rc = c
				return nil
			},
			Map: func(w string) (string, error) {
				return fmt.Sprintf("%s %d/%d (max %d)", rc.OperatorName(), rc.IndexOfThisSubtask()+1,
					rc.NumberOfParallelSubtasks(), rc.MaxNumberOfParallelSubtasks()), nil
			},
		}
	}).Name("tag")
	out := stream.Collect(tagged)
	if _, err := env.Execute(context.Background()); err != nil {
		panic(err)
	}
	lines := out.Values()
	slices.Sort(lines)
	fmt.Println(strings.Join(slices.Compact(lines), "\n"))
	// Output:
	// tag 1/3 (max 128)
	// tag 2/3 (max 128)
	// tag 3/3 (max 128)
}

// Keyed functions get their state by descriptor from their
// KeyedRuntimeContext in Open, as Flink's getRuntimeContext().getState.
func ExampleGetState() {
	env := stream.New(stream.Options{Parallelism: 2})
	words := stream.FromSlice(env, []string{"a", "b", "a", "a"})
	counts := stream.KeyedProcess(stream.KeyBy(words, func(w string) string { return w }),
		func() stream.KeyedProcessFunction[string, string, string] {
			var seen state.ValueState[int]
			return stream.KeyedProcessFunction[string, string, string]{
				Open: func(rc *stream.KeyedRuntimeContext[string]) (err error) {
					seen, err = stream.GetState(rc, state.ValueDescriptor[int]{Name: "seen"})
					return err
				},
				ProcessElement: func(w string, _ *stream.KeyedContext[string], out stream.Collector[string]) error {
					n, _ := seen.Value()
					seen.Update(n + 1)
					out.Collect(fmt.Sprintf("%s #%d", w, n+1))
					return nil
				},
			}
		})
	out := stream.Collect(counts)
	if _, err := env.Execute(context.Background()); err != nil {
		panic(err)
	}
	lines := out.Values()
	slices.Sort(lines)
	fmt.Println(strings.Join(lines, "\n"))
	// Output:
	// a #1
	// a #2
	// a #3
	// b #1
}

// User metrics: a function registers a counter, a gauge and a histogram in
// its operator's metric group in Open and updates them per record; the
// job's metrics show them per subtask, scoped
// <operator>.<subtask>.<group>.<name> (Flink's scope order).
func ExampleRuntimeContext_MetricGroup() {
	env := stream.New(stream.Options{Parallelism: 1})
	words := stream.FromSlice(env, []string{"to", "be", "or", "not", "to", "be", "question"})
	lengths := stream.RichMap(words, func() stream.RichMapFunction[string, int] {
		var (
			mu      sync.Mutex
			longest int
			seen    *metrics.Counter
			sizes   *metrics.Histogram
		)
		return stream.RichMapFunction[string, int]{
			Open: func(rc *stream.RuntimeContext) error {
				seen = rc.MetricGroup().Counter("words")
				g := rc.MetricGroup().AddGroup("length")
				sizes = g.Histogram("histogram", 100)
				g.GaugeInt("longest", func() int64 { // read by whoever reads the metrics
					mu.Lock()
					defer mu.Unlock()
					return int64(longest)
				})
				return nil
			},
			Map: func(w string) (int, error) {
				seen.Inc()
				sizes.Update(int64(len(w)))
				mu.Lock()
				longest = max(longest, len(w))
				mu.Unlock()
				return len(w), nil
			},
		}
	}).Name("lengths")
	stream.Discard(lengths)
	res, err := env.Execute(context.Background())
	if err != nil {
		panic(err)
	}
	for _, v := range res.Vertices {
		for _, s := range v.Subtasks {
			for _, m := range s.Metrics {
				fmt.Println(m)
			}
		}
	}
	// Output:
	// lengths.0.words counter 7
	// lengths.0.length.histogram histogram 7 values min=2 p50=2 p95=8 p99=8 max=8 mean=3
	// lengths.0.length.longest gauge 8
}
