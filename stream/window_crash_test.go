package stream

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
	"github.com/weirdata/weir/stream/window"
)

type crashEv struct {
	K string
	T int64
	V int64
}

type crashSum struct{}

func (crashSum) CreateAccumulator() int64     { return 0 }
func (crashSum) Add(e crashEv, a int64) int64 { return a + e.V }
func (crashSum) GetResult(a int64) int64      { return a }
func (crashSum) Merge(a, b int64) int64       { return a + b }

// TestWindowCrashRestore cancels a throttled tumbling-window job on the heap
// backend at random moments while it checkpoints every few tens of
// milliseconds (asynchronous captures, written while the windows go on
// firing), restarts it from its latest checkpoint each time and lets the
// last run finish: the committed lines must be the per-key window sums of
// the input, none lost and none twice.
func TestWindowCrashRestore(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for seconds")
	}
	const n = 40000
	r := rand.New(rand.NewPCG(1, 2))
	events := make([]crashEv, n)
	sums := map[string]int64{}
	for i := range events {
		e := crashEv{K: fmt.Sprintf("u%d", r.IntN(7)), T: 1_000_000 + int64(i)*10, V: int64(r.IntN(1000))}
		events[i] = e
		start := e.T - e.T%1000
		sums[e.K+","+strconv.FormatInt(start, 10)] += e.V
	}
	var oracle []string
	for k, s := range sums {
		oracle = append(oracle, k+","+strconv.FormatInt(s, 10))
	}
	slices.Sort(oracle)
	assigner := window.TumblingEventTimeWindows(time.Second)
	if err := assigner.Err(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	build := func(env *Env) {
		strategy := watermark.ForGenerator(func(watermark.Context) watermark.Generator[crashEv] {
			maxTs := int64(math.MinInt64)
			return watermark.Punctuated(func(_ crashEv, ts int64) (int64, bool) {
				if ts <= maxTs {
					return 0, false
				}
				maxTs = ts
				return ts - 1, true
			})
		}).WithTimestampAssigner(func(e crashEv, _ int64) int64 { return e.T })
		src := FromSource(env, source.FromSlice(events, source.BatchSize(10)), strategy, "events").SetParallelism(1).UID("events")
		ws := Window(KeyBy(src, func(e crashEv) string { return e.K }), assigner)
		lines := WindowAggregateProcess(ws, crashSum{}, func() ProcessWindowFunction[string, window.TimeWindow, int64, string] {
			return ProcessWindowFunction[string, window.TimeWindow, int64, string]{
				Process: func(key string, ctx *WindowContext[string, window.TimeWindow], accs []int64, out Collector[string]) error {
					for _, a := range accs {
						out.Collect(key + "," + strconv.FormatInt(ctx.Window().Start, 10) + "," + strconv.FormatInt(a, 10))
					}
					return nil
				},
			}
		}).UID("windows")
		SinkTo(lines, sink.Text(dir))
	}
	store := checkpoint.NewMemory(1)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rr := rand.New(rand.NewPCG(seed, 3))
	for range 30 {
		snap, _, _ := store.Latest()
		env := New(Options{Parallelism: 2, Restore: snap, SourceRate: 5000})
		env.EnableCheckpointing(time.Duration(10+rr.IntN(60)) * time.Millisecond).Storage = store
		build(env)
		j, err := env.Start(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(30+rr.IntN(200)) * time.Millisecond)
		j.Cancel()
		if _, err := j.Wait(); err == nil {
			t.Fatal("the job finished before it was cancelled: make the input longer")
		}
	}
	snap, _, _ := store.Latest()
	env := New(Options{Parallelism: 2, Restore: snap})
	env.EnableCheckpointing(time.Hour).Storage = store
	build(env)
	if _, err := env.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, hidden := dirState(t, dir)
	if len(hidden) != 0 {
		t.Errorf("hidden files left: %v", hidden)
	}
	if slices.Equal(got, oracle) {
		return
	}
	count := map[string]int{} // lines of the oracle less lines committed
	for _, l := range oracle {
		count[l]++
	}
	for _, l := range got {
		count[l]--
	}
	var lost, dup []string
	for l, c := range count {
		for ; c > 0; c-- {
			lost = append(lost, l)
		}
		for ; c < 0; c++ {
			dup = append(dup, l)
		}
	}
	slices.Sort(lost)
	slices.Sort(dup)
	t.Fatalf("%d lines lost %q, %d extra %q (of %d)", len(lost), lost[:min(len(lost), 20)], len(dup), dup[:min(len(dup), 20)], len(oracle))
}
