package stream

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
	"github.com/weirdata/weir/stream/window"
)

// TestAssignTimestampsAndWatermarksJob: a source whose own watermarks run
// far ahead (they would make every window late), a Map, then
// AssignTimestampsAndWatermarks. The source's watermarks are dropped.
//   - At parallelism 1 with a punctuated generator (the watermark is each
//     event's time, at once), the stragglers are late exactly where a
//     naive replay in order says.
//   - With the Map at parallelism 3 (the order across its subtasks is
//     lost) and no watermarks but the end of input's, every event counts.
func TestAssignTimestampsAndWatermarksJob(t *testing.T) {
	const size = 100
	r := rand.New(rand.NewPCG(3, 9))
	var events []windowEvent
	for i := range 3000 {
		ts := 1000 + int64(i)*7 // positive, as oracleWindows wants
		if r.IntN(20) == 0 {
			ts -= r.Int64N(400) // a straggler
		}
		events = append(events, windowEvent{Key: fmt.Sprintf("k%d", r.IntN(5)), TS: ts, N: r.IntN(100)})
	}
	// the replay: the watermark is the largest time seen before, and a
	// record whose window ended by then is dropped
	wm := int64(-1 << 63)
	var kept []windowEvent
	for _, e := range events {
		start := e.TS - ((e.TS%size)+size)%size
		if start+size-1 > wm {
			kept = append(kept, e)
		}
		wm = max(wm, e.TS)
	}
	if len(kept) == len(events) || len(kept) < len(events)*9/10 {
		t.Fatalf("%d of %d kept: the data does not test lateness", len(kept), len(events))
	}
	stampTS := func(e windowEvent, _ int64) int64 { return e.TS }
	punctuated := watermark.ForGenerator(func(watermark.Context) watermark.Generator[windowEvent] {
		return watermark.Punctuated(func(_ windowEvent, ts int64) (int64, bool) { return ts, true })
	}).WithTimestampAssigner(stampTS)
	for _, c := range []struct {
		name     string
		mapPar   int
		strategy watermark.Strategy[windowEvent]
		want     []string
	}{
		{"punctuated", 1, punctuated, oracleWindows(kept, size, size, 0)},
		{"end of input", 3, watermark.NoWatermarks[windowEvent]().WithTimestampAssigner(stampTS), oracleWindows(events, size, size, 0)},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := New(Options{Parallelism: 1})
			ahead := watermark.ForMonotonousTimestamps[windowEvent]().
				WithTimestampAssigner(func(e windowEvent, _ int64) int64 { return e.TS + 1_000_000 })
			src := FromSource(env, source.FromSlice(events), ahead, "events")
			mapped := Map(src, func(e windowEvent) windowEvent { return e }).SetParallelism(c.mapPar)
			stamped := mapped.AssignTimestampsAndWatermarks(c.strategy)
			ws := Window(KeyBy(stamped, func(e windowEvent) string { return e.Key }), window.TumblingEventTimeWindows(size*time.Millisecond))
			out := WindowAggregateProcess(ws, sumAgg{}, func() ProcessWindowFunction[string, window.TimeWindow, int, string] {
				return ProcessWindowFunction[string, window.TimeWindow, int, string]{
					Process: func(k string, ctx *WindowContext[string, window.TimeWindow], sums []int, out Collector[string]) error {
						out.Collect(windowLine(k, ctx.Window(), sums[0]))
						return nil
					},
				}
			})
			got := Collect(out)
			if _, err := env.Execute(context.Background()); err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, r := range got.Records() {
				lines = append(lines, r.Value)
			}
			slices.Sort(lines)
			if !slices.Equal(lines, c.want) {
				var extra, missing []string
				for _, l := range lines {
					if !slices.Contains(c.want, l) {
						extra = append(extra, l)
					}
				}
				for _, l := range c.want {
					if !slices.Contains(lines, l) {
						missing = append(missing, l)
					}
				}
				t.Fatalf("%d windows, want %d: %d unexpected %.10q, %d missing %.10q", len(lines), len(c.want), len(extra), extra, len(missing), missing)
			}
		})
	}
}

// TestAssignTimestampsAndWatermarksBuild: an invalid strategy is a build
// error at the caller's line, and the operator heads its own task.
func TestAssignTimestampsAndWatermarksBuild(t *testing.T) {
	env := New(Options{Parallelism: 1})
	src := FromSlice(env, []int{1, 2, 3})
	Collect(src.AssignTimestampsAndWatermarks(watermark.ForBoundedOutOfOrderness[int](-time.Second)))
	_, err := env.Execute(context.Background())
	if err == nil || !containsAll(err.Error(), "watermarks_test.go:", "AssignTimestampsAndWatermarks", "negative") {
		t.Fatalf("err = %v", err)
	}

	env = New(Options{Parallelism: 1})
	Collect(Map(FromSlice(env, []int{1}), func(v int) int { return v }).
		AssignTimestampsAndWatermarks(watermark.ForMonotonousTimestamps[int]()))
	p, err := env.Plan()
	if err != nil {
		t.Fatal(err)
	}
	var head string
	for _, task := range p.Tasks {
		for i, o := range task.Operators {
			if o.Name == "Timestamps/Watermarks" && i == 0 {
				head = task.Name
			}
		}
	}
	if head != "Timestamps/Watermarks" {
		t.Fatalf("the assigner does not head its task:\n%s", p.Text())
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
