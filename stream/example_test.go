package stream_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
	"github.com/weirdata/weir/stream/window"
)

type wordCount struct {
	Word  string
	Count int
}

// A streaming word count: running counts per word, printed as Flink
// prints tuples (no subtask prefix at parallelism 1).
func Example() {
	env := stream.New(stream.Options{Parallelism: 1})
	lines := stream.FromSlice(env, []string{"to be or", "not to be"})
	words := stream.FlatMap(lines, func(line string, emit func(wordCount)) {
		for _, w := range strings.Fields(line) {
			emit(wordCount{w, 1})
		}
	})
	counts := stream.Sum(stream.KeyBy(words, func(w wordCount) string { return w.Word }),
		func(w wordCount) int { return w.Count },
		func(w *wordCount, n int) { w.Count = n })
	stream.Print(counts)
	if _, err := env.Execute(context.Background()); err != nil {
		panic(err)
	}
	// Output:
	// (to,1)
	// (be,1)
	// (or,1)
	// (not,1)
	// (to,2)
	// (be,2)
}

type click struct {
	User string
	Time int64 // epoch milliseconds
	N    int
}

// Event-time windows: clicks per user in tumbling windows of 10 seconds,
// with 2 seconds of out-of-orderness; a click that arrives after its
// window fired goes to a side output.
func Example_windows() {
	env := stream.New(stream.Options{Parallelism: 1})
	clicks := []click{
		{"ann", 1_000, 1}, {"bob", 3_000, 1}, {"ann", 9_500, 1}, {"ann", 8_000, 1}, // 8 s: out of order, in time
		{"bob", 14_000, 1}, {"ann", 15_000, 1}, {"ann", 4_000, 1}, // 4 s: its window fired at 12 s
		{"bob", 22_000, 1},
	}
	// a watermark after each click (the largest time seen - 2 s - 1), so
	// that the example's output does not depend on timing
	perClick := watermark.ForGenerator(func(watermark.Context) watermark.Generator[click] {
		latest := watermark.Min
		return watermark.Punctuated(func(_ click, ts int64) (int64, bool) {
			latest = max(latest, ts)
			return latest - 2_000 - 1, true
		})
	}).WithTimestampAssigner(func(c click, _ int64) int64 { return c.Time })
	events := stream.FromSource(env, source.FromSlice(clicks), perClick, "clicks")
	tumbling := window.TumblingEventTimeWindows(10 * time.Second)
	if err := tumbling.Err(); err != nil {
		panic(err)
	}
	late := stream.NewOutputTag[click]("late")
	perUser := stream.Window(stream.KeyBy(events, func(c click) string { return c.User }), tumbling).
		SideOutputLateData(late)
	counts := stream.WindowSum(perUser, func(c click) int { return c.N }, func(c *click, n int) { c.N = n })
	stream.Print(stream.Map(counts, func(c click) string { return fmt.Sprintf("%s: %d", c.User, c.N) }))
	stream.Print(stream.Map(stream.GetSideOutput(counts, late), func(c click) string {
		return fmt.Sprintf("late: %s at %d", c.User, c.Time)
	}))
	if _, err := env.Execute(context.Background()); err != nil {
		panic(err)
	}
	// Unordered output:
	// ann: 3
	// bob: 1
	// late: ann at 4000
	// ann: 1
	// bob: 1
	// bob: 1
}

// Checkpoints in a library program: keyed state in a KeyedProcessFunction,
// checkpoints into a directory. A job with checkpoints resumes from its
// directory's latest checkpoint when it starts; here it ran to its end,
// and its last checkpoint says it finished.
func Example_checkpoints() {
	dir, err := os.MkdirTemp("", "weir-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	store, err := checkpoint.OpenDir(dir, checkpoint.DirOptions{})
	if err != nil {
		panic(err)
	}
	env := stream.New(stream.Options{Parallelism: 1})
	env.EnableCheckpointing(time.Second).Storage = store
	words := stream.FromSlice(env, []string{"a", "b", "a", "a"}).UID("words")
	firsts := stream.KeyedProcess(stream.KeyBy(words, func(w string) string { return w }),
		func() stream.KeyedProcessFunction[string, string, string] {
			var seen state.ValueState[int]
			return stream.KeyedProcessFunction[string, string, string]{
				Open: func(rc *stream.KeyedRuntimeContext[string]) (err error) {
					seen, err = stream.GetState(rc, state.ValueDescriptor[int]{Name: "seen"})
					return err
				},
				ProcessElement: func(w string, ctx *stream.KeyedContext[string], out stream.Collector[string]) error {
					n, _ := seen.Value()
					seen.Update(n + 1)
					out.Collect(fmt.Sprintf("%s #%d", w, n+1))
					return nil
				},
			}
		}).UID("count")
	stream.Print(firsts)
	if _, err := env.Execute(context.Background()); err != nil {
		panic(err)
	}
	last, _, err := store.Latest()
	if err != nil {
		panic(err)
	}
	fmt.Println("finished:", last.Finished)
	// Output:
	// a #1
	// b #1
	// a #2
	// a #3
	// finished: true
}

// Timestamps from a field of the parsed record, not of the source's lines:
// a line is parsed first, then stamped with its time, and windows count
// the words per 10 seconds.
func ExampleDataStream_AssignTimestampsAndWatermarks() {
	env := stream.New(stream.Options{Parallelism: 1})
	lines := stream.FromSlice(env, []string{"1000 to", "4000 be", "12000 or", "15000 not", "21000 to"})
	parsed := stream.Map(lines, func(l string) click {
		var c click
		fmt.Sscanf(l, "%d %s", &c.Time, &c.User)
		c.N = 1
		return c
	})
	stamped := parsed.AssignTimestampsAndWatermarks(watermark.ForMonotonousTimestamps[click]().
		WithTimestampAssigner(func(c click, _ int64) int64 { return c.Time }))
	counts := stream.WindowAll(stamped, window.TumblingEventTimeWindows(10*time.Second)).
		Reduce(func(a, b click) click { a.N += b.N; return a })
	stream.Print(stream.Map(counts, func(c click) string { return fmt.Sprintf("%d words from %d", c.N, c.Time) }))
	if _, err := env.Execute(context.Background()); err != nil {
		panic(err)
	}
	// Output:
	// 2 words from 1000
	// 2 words from 12000
	// 1 words from 21000
}

// Watermark alignment (Flink's FLIP-182): two sources in one alignment
// group. A source whose watermark runs more than the maximal drift ahead
// of the group's least stops reading (split by split) until the others
// catch up, so that the windows downstream do not hold the fast source's
// records for long while they wait for the slow one's watermark. Every
// 10 ms each source subtask reports its watermark; an ended one holds no
// one back. The results are those of the same job without alignment.
func Example_watermarkAlignment() {
	env := stream.New(stream.Options{Parallelism: 1, AutoWatermarkInterval: 10 * time.Millisecond})
	sensor := func(name string, every int64) stream.DataStream[click] {
		readings := make([]click, 12)
		for i := range readings {
			readings[i] = click{User: name, Time: int64(i) * every, N: 1}
		}
		aligned := watermark.ForMonotonousTimestamps[click]().
			WithTimestampAssigner(func(c click, _ int64) int64 { return c.Time }).
			WithWatermarkAlignment("sensors", 5*time.Second, 10*time.Millisecond)
		return stream.FromSource(env, source.FromSlice(readings), aligned, name)
	}
	both := sensor("fast", 5_000).Union(sensor("slow", 1_000))
	perMinute := stream.Window(stream.KeyBy(both, func(c click) string { return c.User }),
		window.TumblingEventTimeWindows(time.Minute))
	counts := stream.WindowSum(perMinute, func(c click) int { return c.N }, func(c *click, n int) { c.N = n })
	stream.Print(stream.Map(counts, func(c click) string { return fmt.Sprintf("%s: %d in the minute from %d", c.User, c.N, c.Time) }))
	if _, err := env.Execute(context.Background()); err != nil {
		panic(err)
	}
	// Unordered output:
	// slow: 12 in the minute from 0
	// fast: 12 in the minute from 0
}
