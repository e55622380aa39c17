package stream

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

// wordCounts runs the WordCount program over lines in mode at parallelism
// p and returns its output as "word,count" strings.
func wordCounts(t *testing.T, lines []string, mode Mode, p int) []string {
	t.Helper()
	env := New(Options{Parallelism: p, Mode: mode})
	words := FlatMap(FromSlice(env, lines), tokenize)
	counts := Sum(KeyBy(words, func(w wordCount) string { return w.Word }),
		func(w wordCount) int { return w.Count }, func(w *wordCount, n int) { w.Count = n })
	got := Collect(counts)
	execute(t, env)
	var out []string
	for _, wc := range got.Values() {
		out = append(out, fmt.Sprintf("%s,%d", wc.Word, wc.Count))
	}
	slices.Sort(out)
	return out
}

// TestWordCountBatch: in BATCH (and AUTOMATIC over a bounded source) the
// rolling sum emits each word's final count only, as a naive count says
// and as the last running count of each word in STREAMING says.
func TestWordCountBatch(t *testing.T) {
	lines := wordCountLines(t)
	final := map[string]int{}
	for _, l := range lines {
		tokenize(l, func(wc wordCount) { final[wc.Word]++ })
	}
	var want []string
	for w, c := range final {
		want = append(want, fmt.Sprintf("%s,%d", w, c))
	}
	slices.Sort(want)
	for _, p := range []int{1, 2} {
		for _, mode := range []Mode{Batch, Automatic} {
			if got := wordCounts(t, lines, mode, p); !slices.Equal(got, want) {
				t.Errorf("mode %d p%d: %d counts, want %d", mode, p, len(got), len(want))
			}
		}
		last := map[string]int{}
		for _, s := range wordCounts(t, lines, Streaming, p) {
			var w string
			var c int
			i := len(s) - 1
			for s[i] != ',' {
				i--
			}
			w = s[:i]
			fmt.Sscan(s[i+1:], &c)
			last[w] = max(last[w], c)
		}
		if len(last) != len(final) {
			t.Errorf("p%d: streaming saw %d words, batch %d", p, len(last), len(final))
		}
		for w, c := range final {
			if last[w] != c {
				t.Errorf("p%d: %s: streaming ends at %d, batch says %d", p, w, last[w], c)
			}
		}
	}
}

// TestBatchKeyedTimers: a keyed process function with state and
// event-time timers gives the same answer in BATCH as in STREAMING: each
// key's timers fire at the end of that key, in timestamp order, and the
// function sees the minimal watermark while it processes, so nothing is
// late.
func TestBatchKeyedTimers(t *testing.T) {
	events := []event{{"a", 5}, {"b", 1}, {"a", 1}, {"b", 12}, {"a", 11}, {"c", 30}, {"a", 19}, {"b", 3}}
	run := func(mode Mode) []string {
		env := New(Options{Parallelism: 2, Mode: mode})
		src := FromSlice(env, events)
		out := KeyedProcess(KeyBy(src, func(e event) string { return e.Key }), func() KeyedProcessFunction[string, event, string] {
			pending := map[string][]int64{} // the subtask's timestamps per key, until their timer
			return KeyedProcessFunction[string, event, string]{
				ProcessElement: func(e event, ctx *KeyedContext[string], _ Collector[string]) error {
					if ctx.CurrentWatermark() >= e.TS {
						return fmt.Errorf("%v late at %d", e, ctx.CurrentWatermark())
					}
					pending[e.Key] = append(pending[e.Key], e.TS)
					ctx.RegisterEventTimeTimer(e.TS - e.TS%10 + 9)
					return nil
				},
				OnTimer: func(ts int64, ctx *KeyedContext[string], out Collector[string]) error {
					n := 0
					var keep []int64
					for _, x := range pending[ctx.CurrentKey()] {
						if x <= ts {
							n++
						} else {
							keep = append(keep, x)
						}
					}
					pending[ctx.CurrentKey()] = keep
					out.Collect(fmt.Sprintf("%s@%d:%d", ctx.CurrentKey(), ts, n))
					return nil
				},
			}
		})
		got := Collect(out)
		execute(t, env)
		return sorted(got.Values(), compareString)
	}
	want := []string{"a@19:2", "a@9:2", "b@19:1", "b@9:2", "c@39:1"}
	slices.Sort(want)
	if got := run(Streaming); !slices.Equal(got, want) {
		t.Errorf("streaming: %v, want %v", got, want)
	}
	if got := run(Batch); !slices.Equal(got, want) {
		t.Errorf("batch: %v, want %v", got, want)
	}
}

// TestBatchOneKeyAtATime: in BATCH a keyed operator holds only the current
// key's state (the state lists one key whatever came before), while in
// STREAMING it holds every key seen; the counts are the same.
func TestBatchOneKeyAtATime(t *testing.T) {
	in := []event{{"a", 1}, {"b", 2}, {"a", 3}, {"c", 4}, {"b", 5}, {"a", 6}}
	run := func(mode Mode) ([]string, int) {
		env := New(Options{Parallelism: 1, Mode: mode})
		most := 0
		out := KeyedProcess(KeyBy(FromSlice(env, in), func(e event) string { return e.Key }), func() KeyedProcessFunction[string, event, string] {
			var count *state.Value[string, state.Void, int]
			return KeyedProcessFunction[string, event, string]{
				Open: func(rc *KeyedRuntimeContext[string]) (err error) {
					count, err = state.NewValue[string, state.Void, int](rc.Backend(), state.ValueDescriptor[int]{Name: "count"})
					return err
				},
				ProcessElement: func(e event, ctx *KeyedContext[string], _ Collector[string]) error {
					c, _ := count.Value()
					count.Update(c + 1)
					most = max(most, len(count.KeysIn(state.Void{})))
					ctx.RegisterEventTimeTimer(100)
					return nil
				},
				OnTimer: func(ts int64, ctx *KeyedContext[string], out Collector[string]) error {
					c, _ := count.Value()
					out.Collect(fmt.Sprintf("%s:%d", ctx.CurrentKey(), c))
					return nil
				},
			}
		})
		got := Collect(out)
		execute(t, env)
		return sorted(got.Values(), compareString), most
	}
	want := []string{"a:3", "b:2", "c:1"}
	got, most := run(Streaming)
	if !slices.Equal(got, want) || most != 3 {
		t.Errorf("streaming: %v, %d keys held, want %v and 3", got, most, want)
	}
	got, most = run(Batch)
	if !slices.Equal(got, want) || most != 1 {
		t.Errorf("batch: %v, %d keys held, want %v and 1", got, most, want)
	}
}

// TestBatchTwoInputOrder: in BATCH a keyed two-input operator sees each
// key's records of both inputs merged by timestamp (the first input first
// on ties), one key after the other.
func TestBatchTwoInputOrder(t *testing.T) {
	env := New(Options{Parallelism: 2, Mode: Batch})
	ts := watermark.NoWatermarks[event]().WithTimestampAssigner(func(e event, _ int64) int64 { return e.TS })
	a := FromSource(env, source.FromSlice([]event{{"x", 5}, {"y", 2}, {"x", 1}, {"x", 3}}), ts, "a")
	b := FromSource(env, source.FromSlice([]event{{"x", 3}, {"y", 1}, {"x", 2}, {"x", 9}}), ts, "b")
	key := func(e event) string { return e.Key }
	out := KeyedCoProcess(ConnectKeyed(KeyBy(a, key), KeyBy(b, key)), func() KeyedCoProcessFunction[string, event, event, string] {
		var current string
		trace := ""
		emit := func(input string, e event, ctx *KeyedContext[string], out Collector[string]) error {
			if ctx.CurrentKey() != current && trace != "" {
				return fmt.Errorf("key %s before the end of key %s", ctx.CurrentKey(), current)
			}
			current = ctx.CurrentKey()
			trace += fmt.Sprintf(" %s%d", input, e.TS)
			ctx.RegisterEventTimeTimer(100)
			return nil
		}
		return KeyedCoProcessFunction[string, event, event, string]{
			ProcessElement1: func(e event, ctx *KeyedContext[string], out Collector[string]) error { return emit("a", e, ctx, out) },
			ProcessElement2: func(e event, ctx *KeyedContext[string], out Collector[string]) error { return emit("b", e, ctx, out) },
			OnTimer: func(_ int64, ctx *KeyedContext[string], out Collector[string]) error {
				out.Collect(ctx.CurrentKey() + ":" + trace)
				trace = ""
				return nil
			},
		}
	})
	got := Collect(out)
	execute(t, env)
	want := []string{"x: a1 b2 a3 b3 a5 b9", "y: b1 a2"}
	if have := sorted(got.Values(), compareString); !slices.Equal(have, want) {
		t.Fatalf("got %q, want %q", have, want)
	}
}

// TestBatchSpills runs the BATCH word count over a larger text under a
// small memory budget: the sort by key spills, and the counts still equal
// the naive ones.
func TestBatchSpills(t *testing.T) {
	base := wordCountLines(t)
	var lines []string
	for i := range 200 {
		for _, l := range base {
			lines = append(lines, fmt.Sprintf("%s w%d", l, i%50))
		}
	}
	final := map[string]int{}
	for _, l := range lines {
		tokenize(l, func(wc wordCount) { final[wc.Word]++ })
	}
	env := New(Options{Parallelism: 2, Mode: Batch, Memory: 8 << 20})
	words := FlatMap(FromSlice(env, lines), tokenize)
	counts := Sum(KeyBy(words, func(w wordCount) string { return w.Word }),
		func(w wordCount) int { return w.Count }, func(w *wordCount, n int) { w.Count = n })
	got := Collect(counts)
	res, err := env.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.SpilledBytes() == 0 {
		t.Errorf("nothing spilled under an 8 MiB budget")
	}
	have := map[string]int{}
	for _, wc := range got.Values() {
		if _, dup := have[wc.Word]; dup {
			t.Fatalf("%s emitted twice", wc.Word)
		}
		have[wc.Word] = wc.Count
	}
	if len(have) != len(final) {
		t.Fatalf("%d words, want %d", len(have), len(final))
	}
	for w, c := range final {
		if have[w] != c {
			t.Errorf("%s: %d, want %d", w, have[w], c)
		}
	}
}
