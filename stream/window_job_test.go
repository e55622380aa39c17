package stream

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
	"github.com/weirdata/weir/stream/window"
)

// windowEvent is a keyed value at an event time.
type windowEvent struct {
	Key string
	TS  int64
	N   int
}

func windowEvents(n, keys int, span int64, seed uint64) []windowEvent {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]windowEvent, n)
	for i := range out {
		out[i] = windowEvent{Key: fmt.Sprintf("k%d", r.IntN(keys)), TS: r.Int64N(span), N: r.IntN(100)}
	}
	return out
}

// windowSums runs a keyed window sum over events (timestamps assigned, no
// watermark before the end, so nothing is late) and returns
// "key,start,end,sum@ts" lines sorted.
func windowSums(t *testing.T, events []windowEvent, a window.Assigner[window.TimeWindow], mode Mode, p int, memory int64) ([]string, error) {
	t.Helper()
	ts := watermark.NoWatermarks[windowEvent]().WithTimestampAssigner(func(e windowEvent, _ int64) int64 { return e.TS })
	return windowSumsWith(events, a, ts, New(Options{Parallelism: p, Mode: mode, Memory: memory}))
}

func windowSumsWith(events []windowEvent, a window.Assigner[window.TimeWindow], ts watermark.Strategy[windowEvent], env *Env) ([]string, error) {
	src := FromSource(env, source.FromSlice(events), ts, "events").SetParallelism(1)
	ws := Window(KeyBy(src, func(e windowEvent) string { return e.Key }), a)
	out := WindowAggregateProcess(ws, sumAgg{}, func() ProcessWindowFunction[string, window.TimeWindow, int, string] {
		return ProcessWindowFunction[string, window.TimeWindow, int, string]{
			Process: func(k string, ctx *WindowContext[string, window.TimeWindow], sums []int, out Collector[string]) error {
				w := ctx.Window()
				out.Collect(fmt.Sprintf("%s,%d,%d,%d", k, w.Start, w.End, sums[0]))
				return nil
			},
		}
	})
	got := Collect(out)
	if _, err := env.Execute(context.Background()); err != nil {
		return nil, err
	}
	var lines []string
	for _, r := range got.Records() {
		lines = append(lines, fmt.Sprintf("%s@%d", r.Value, r.Timestamp))
	}
	slices.Sort(lines)
	return lines, nil
}

// sumAgg adds up N.
type sumAgg struct{}

func (sumAgg) CreateAccumulator() int         { return 0 }
func (sumAgg) Add(e windowEvent, acc int) int { return acc + e.N }
func (sumAgg) GetResult(acc int) int          { return acc }
func (sumAgg) Merge(a, b int) int             { return a + b }
func (sumAgg) String() string                 { return "sum" }
func windowLine(k string, w window.TimeWindow, s int) string {
	return fmt.Sprintf("%s,%d,%d,%d@%d", k, w.Start, w.End, s, w.MaxTimestamp())
}

// oracleWindows computes the sums per key and window naively: fixed
// windows by enumerating every window start, sessions by sorting each
// key's timestamps and cutting at gaps.
func oracleWindows(events []windowEvent, size, slide, gap int64) []string {
	sums := map[string]map[window.TimeWindow]int{}
	add := func(k string, w window.TimeWindow, n int) {
		if sums[k] == nil {
			sums[k] = map[window.TimeWindow]int{}
		}
		sums[k][w] += n
	}
	if gap == 0 {
		for _, e := range events {
			for start := int64(-size); start <= e.TS; start += slide {
				if e.TS >= start && e.TS < start+size {
					add(e.Key, window.TimeWindow{Start: start, End: start + size}, e.N)
				}
			}
		}
	} else {
		byKey := map[string][]windowEvent{}
		for _, e := range events {
			byKey[e.Key] = append(byKey[e.Key], e)
		}
		for k, es := range byKey {
			slices.SortFunc(es, func(a, b windowEvent) int { return int(a.TS - b.TS) })
			var cur window.TimeWindow
			s := 0
			for i, e := range es {
				if i > 0 && e.TS <= cur.End {
					cur.End = max(cur.End, e.TS+gap)
					s += e.N
					continue
				}
				if i > 0 {
					add(k, cur, s)
				}
				cur, s = window.TimeWindow{Start: e.TS, End: e.TS + gap}, e.N
			}
			add(k, cur, s)
		}
	}
	var out []string
	for k, m := range sums {
		for w, s := range m {
			out = append(out, windowLine(k, w, s))
		}
	}
	slices.Sort(out)
	return out
}

// TestWindowJobs runs tumbling, sliding and session window sums as jobs at
// parallelism 1 and 2, in STREAMING and BATCH and with the keyed state on
// disk, against the naive oracle:
// a bounded input ends with the maximal watermark, so every window fires
// once with its final sum.
func TestWindowJobs(t *testing.T) {
	events := windowEvents(3000, 40, 60_000, 1)
	inOrder := slices.Clone(events)
	slices.SortStableFunc(inOrder, func(a, b windowEvent) int { return int(a.TS - b.TS) })
	tumbling := window.TumblingEventTimeWindows(5 * time.Second)
	sliding := window.SlidingEventTimeWindows(10*time.Second, 2*time.Second)
	sessions := window.EventTimeSessionWindows(700 * time.Millisecond)
	cases := []struct {
		name             string
		a                window.Assigner[window.TimeWindow]
		size, slide, gap int64
	}{
		{"tumbling", tumbling, 5000, 5000, 0},
		{"sliding", sliding, 10000, 2000, 0},
		{"sessions", sessions, 0, 0, 700},
	}
	for _, c := range cases {
		want := oracleWindows(events, c.size, c.slide, c.gap)
		for _, p := range []int{1, 2} {
			for _, mode := range []Mode{Streaming, Batch} {
				got, err := windowSums(t, events, c.a, mode, p, 0)
				if err != nil {
					t.Fatalf("%s p%d mode %d: %v", c.name, p, mode, err)
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s p%d mode %d: %d windows, want %d; first diff %s", c.name, p, mode, len(got), len(want), firstDiff(got, want))
				}
			}
			// the window contents, accumulators and merged sessions in the
			// disk backend
			ts := watermark.NoWatermarks[windowEvent]().WithTimestampAssigner(func(e windowEvent, _ int64) int64 { return e.TS })
			got, err := windowSumsWith(events, c.a, ts, New(Options{Parallelism: p, StateBackend: DiskBackend, TmpDir: t.TempDir()}))
			if err != nil {
				t.Fatalf("%s p%d disk: %v", c.name, p, err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s p%d disk: %d windows, want %d; first diff %s", c.name, p, len(got), len(want), firstDiff(got, want))
			}
			// in timestamp order with monotonous watermarks (every 1 ms of
			// wall time), STREAMING fires windows as the watermark passes
			// them, and nothing is late
			mono := watermark.ForMonotonousTimestamps[windowEvent]().WithTimestampAssigner(func(e windowEvent, _ int64) int64 { return e.TS })
			got, err = windowSumsWith(inOrder, c.a, mono, New(Options{Parallelism: p, AutoWatermarkInterval: time.Millisecond}))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s p%d monotonous: %d windows, want %d; first diff %s", c.name, p, len(got), len(want), firstDiff(got, want))
			}
		}
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i] + " vs " + b[i]
		}
	}
	return "(a prefix)"
}

// TestWindowEmptyInput: no input, no windows, in both modes.
func TestWindowEmptyInput(t *testing.T) {
	a := window.TumblingEventTimeWindows(time.Second)
	for _, mode := range []Mode{Streaming, Batch} {
		got, err := windowSums(t, nil, a, mode, 2, 0)
		if err != nil || len(got) != 0 {
			t.Fatalf("mode %d: %v, %v", mode, got, err)
		}
	}
}

// TestWindowMemoryBudget: windows that keep their elements under a budget
// too small for them fail the job with the state's budget error, not a
// crash.
func TestWindowMemoryBudget(t *testing.T) {
	events := windowEvents(200_000, 5000, 1_000_000, 2)
	env := New(Options{Parallelism: 1, Memory: 4 << 20})
	ts := watermark.NoWatermarks[windowEvent]().WithTimestampAssigner(func(e windowEvent, _ int64) int64 { return e.TS })
	src := FromSource(env, source.FromSlice(events), ts, "events")
	a := window.TumblingEventTimeWindows(time.Hour)
	out := WindowProcess(Window(KeyBy(src, func(e windowEvent) string { return e.Key }), a), func() ProcessWindowFunction[string, window.TimeWindow, windowEvent, int] {
		return ProcessWindowFunction[string, window.TimeWindow, windowEvent, int]{
			Process: func(_ string, _ *WindowContext[string, window.TimeWindow], es []windowEvent, out Collector[int]) error {
				out.Collect(len(es))
				return nil
			},
		}
	})
	Collect(out)
	_, err := env.Execute(context.Background())
	if err == nil || !strings.Contains(err.Error(), "of the memory budget of") || !errors.Is(err, memory.ErrBudgetExceeded) {
		t.Fatalf("err = %v, want the memory budget exceeded", err)
	}
}

// TestWindowAll: a non-keyed window runs in one subtask and sees every
// element, whatever the environment's parallelism.
func TestWindowAll(t *testing.T) {
	events := windowEvents(1000, 10, 20_000, 3)
	env := New(Options{Parallelism: 2})
	ts := watermark.NoWatermarks[windowEvent]().WithTimestampAssigner(func(e windowEvent, _ int64) int64 { return e.TS })
	src := FromSource(env, source.FromSlice(events), ts, "events")
	a := window.TumblingEventTimeWindows(5 * time.Second)
	sums := WindowSum(WindowAll(src, a), func(e windowEvent) int { return e.N }, func(e *windowEvent, n int) { e.N = n })
	got := Collect(sums)
	execute(t, env)
	want := map[int64]int{}
	for _, e := range events {
		want[e.TS-e.TS%5000+4999] += e.N
	}
	have := map[int64]int{}
	for _, r := range got.Records() {
		if _, dup := have[r.Timestamp]; dup {
			t.Fatalf("window %d fired twice", r.Timestamp)
		}
		have[r.Timestamp] = r.Value.N
	}
	if fmt.Sprint(have) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", have, want)
	}
}

// TestCountWindowJobs: count windows (tumbling and sliding) give the same
// sums in STREAMING and BATCH at parallelism 1 and 2 when each key's
// elements arrive in timestamp order (BATCH feeds a key's elements sorted
// by timestamp), as a naive count per key says.
func TestCountWindowJobs(t *testing.T) {
	events := windowEvents(2000, 7, 1, 4)
	for i := range events {
		events[i].TS = int64(i)
	}
	// the oracle: per key, the sum of every full group of 5 and, every 2
	// elements, of the last (up to) 4
	byKey := map[string][]int{}
	for _, e := range events {
		byKey[e.Key] = append(byKey[e.Key], e.N)
	}
	var wantTumbling, wantSliding []string
	for k, ns := range byKey {
		for i := 5; i <= len(ns); i += 5 {
			s := 0
			for _, n := range ns[i-5 : i] {
				s += n
			}
			wantTumbling = append(wantTumbling, fmt.Sprintf("%s,%d", k, s))
		}
		for i := 2; i <= len(ns); i += 2 {
			s := 0
			for _, n := range ns[max(0, i-4):i] {
				s += n
			}
			wantSliding = append(wantSliding, fmt.Sprintf("%s,%d", k, s))
		}
	}
	slices.Sort(wantTumbling)
	slices.Sort(wantSliding)
	for _, p := range []int{1, 2} {
		for _, mode := range []Mode{Streaming, Batch} {
			env := New(Options{Parallelism: p, Mode: mode})
			ts := watermark.NoWatermarks[windowEvent]().WithTimestampAssigner(func(e windowEvent, _ int64) int64 { return e.TS })
			src := FromSource(env, source.FromSlice(events), ts, "events").SetParallelism(1)
			ks := KeyBy(src, func(e windowEvent) string { return e.Key })
			getN, setN := func(e windowEvent) int { return e.N }, func(e *windowEvent, n int) { e.N = n }
			tumbling := Collect(WindowSum(CountWindow(ks, 5), getN, setN))
			sliding := Collect(WindowSum(CountWindowSlide(ks, 4, 2), getN, setN))
			execute(t, env)
			lines := func(es []windowEvent) []string {
				var out []string
				for _, e := range es {
					out = append(out, fmt.Sprintf("%s,%d", e.Key, e.N))
				}
				slices.Sort(out)
				return out
			}
			if got := lines(tumbling.Values()); !slices.Equal(got, wantTumbling) {
				t.Errorf("p%d mode %d: countWindow(5): %d sums, want %d", p, mode, len(got), len(wantTumbling))
			}
			if got := lines(sliding.Values()); !slices.Equal(got, wantSliding) {
				t.Errorf("p%d mode %d: countWindow(4, 2): %d sums, want %d", p, mode, len(got), len(wantSliding))
			}
		}
	}
}
