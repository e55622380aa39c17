package stream

import (
	"fmt"
	"maps"
	"slices"
	"testing"
)

// TestKeyedBroadcastJob follows Flink's BroadcastStateITCase
// (testKeyedWithBroadcastTranslation): a keyed stream connected with a
// broadcast stream of rules; each key reports, at the end of event time,
// the rules its subtask's broadcast state holds, so every subtask must
// have received every broadcast record. The oracle is the rule set itself.
func TestKeyedBroadcastJob(t *testing.T) {
	rulesDesc := MapStateDescriptor[string, int]{Name: "rules"}
	var rules []string
	want := map[string]string{}
	for i := range 5 {
		rules = append(rules, fmt.Sprintf("rule%d", i))
	}
	var keys []int64
	for k := range int64(20) {
		keys = append(keys, k)
		want[fmt.Sprint(k)] = fmt.Sprint(rules)
	}
	for _, mode := range []Mode{Streaming, Batch} {
		for _, p := range []int{1, 2} {
			t.Run(fmt.Sprintf("mode%d-p%d", mode, p), func(t *testing.T) {
				env := New(Options{Parallelism: p, Mode: mode})
				ks := KeyBy(FromSlice(env, keys), func(v int64) int64 { return v })
				bs := Broadcast(FromSlice(env, rules).SetParallelism(1), rulesDesc)
				out := KeyedBroadcastProcess(ConnectKeyedBroadcast(ks, bs), func() KeyedBroadcastProcessFunction[int64, int64, string, string] {
					return KeyedBroadcastProcessFunction[int64, int64, string, string]{
						ProcessElement: func(_ int64, ctx *KeyedReadOnlyBroadcastContext[int64], _ Collector[string]) error {
							ctx.RegisterEventTimeTimer(1000)
							return nil
						},
						ProcessBroadcastElement: func(r string, ctx *KeyedBroadcastContext[int64], _ Collector[string]) error {
							s, err := GetBroadcastState(ctx, rulesDesc)
							if err != nil {
								return err
							}
							s.Put(r, len(r))
							return nil
						},
						OnTimer: func(_ int64, ctx *KeyedReadOnlyBroadcastContext[int64], out Collector[string]) error {
							s, err := GetReadOnlyBroadcastState(ctx, rulesDesc)
							if err != nil {
								return err
							}
							out.Collect(fmt.Sprintf("%d=%v", ctx.CurrentKey(), slices.Sorted(maps.Keys(maps.Collect(s.All())))))
							return nil
						},
					}
				})
				got := Collect(out)
				execute(t, env)
				have := map[string]string{}
				for _, v := range got.Values() {
					var k, r string
					for i := range v {
						if v[i] == '=' {
							k, r = v[:i], v[i+1:]
							break
						}
					}
					if _, dup := have[k]; dup {
						t.Fatalf("key %s reported twice", k)
					}
					have[k] = r
				}
				if !maps.Equal(have, want) {
					t.Fatalf("got %v, want %v", have, want)
				}
			})
		}
	}
}

// TestBroadcastJob: the non-keyed side at parallelism p gets every
// broadcast record in every subtask: each subtask reports its broadcast
// state's size per broadcast record, so the sizes 1..n appear p times.
func TestBroadcastJob(t *testing.T) {
	desc := MapStateDescriptor[int, bool]{Name: "seen"}
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			env := New(Options{Parallelism: p})
			bs := Broadcast(FromSlice(env, []int{1, 2, 3}).SetParallelism(1), desc)
			out := BroadcastProcess(ConnectBroadcast(FromSlice(env, []string{"a", "b"}), bs), func() BroadcastProcessFunction[string, int, int] {
				return BroadcastProcessFunction[string, int, int]{
					ProcessElement: func(string, *ReadOnlyBroadcastContext, Collector[int]) error { return nil },
					ProcessBroadcastElement: func(v int, ctx *BroadcastContext, out Collector[int]) error {
						s, err := GetBroadcastState(ctx, desc)
						if err != nil {
							return err
						}
						s.Put(v, true)
						n := 0
						for range s.All() {
							n++
						}
						out.Collect(n)
						return nil
					},
				}
			})
			got := Collect(out)
			execute(t, env)
			var want []int
			for n := 1; n <= 3; n++ {
				for range p {
					want = append(want, n)
				}
			}
			if have := sorted(got.Values(), compareInt); !slices.Equal(have, want) {
				t.Fatalf("got %v, want %v", have, want)
			}
		})
	}
}

// TestBroadcastJobBatchBroadcastFirst: in BATCH mode the broadcast input
// is processed first (Flink's BATCH rule for the broadcast state pattern),
// so every non-broadcast record sees the whole broadcast state, keyed or
// not.
func TestBroadcastJobBatchBroadcastFirst(t *testing.T) {
	desc := MapStateDescriptor[int, bool]{Name: "seen"}
	var words []string
	for i := range 200 {
		words = append(words, fmt.Sprint("w", i%7))
	}
	var rules []int
	for i := range 50 {
		rules = append(rules, i)
	}
	size := func(s ReadOnlyBroadcastState[int, bool]) int {
		n := 0
		for range s.All() {
			n++
		}
		return n
	}
	put := func(v int, ctx WritableBroadcastStateContext) error {
		s, err := GetBroadcastState(ctx, desc)
		if err != nil {
			return err
		}
		s.Put(v, true)
		return nil
	}
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			env := New(Options{Parallelism: p, Mode: Batch})
			bs := Broadcast(FromSlice(env, rules), desc)
			plain := BroadcastProcess(ConnectBroadcast(FromSlice(env, words), bs), func() BroadcastProcessFunction[string, int, int] {
				return BroadcastProcessFunction[string, int, int]{
					ProcessElement: func(_ string, ctx *ReadOnlyBroadcastContext, out Collector[int]) error {
						s, err := GetReadOnlyBroadcastState(ctx, desc)
						if err != nil {
							return err
						}
						out.Collect(size(s))
						return nil
					},
					ProcessBroadcastElement: func(v int, ctx *BroadcastContext, _ Collector[int]) error { return put(v, ctx) },
				}
			})
			keyed := KeyedBroadcastProcess(ConnectKeyedBroadcast(KeyBy(FromSlice(env, words), func(w string) string { return w }), bs),
				func() KeyedBroadcastProcessFunction[string, string, int, int] {
					return KeyedBroadcastProcessFunction[string, string, int, int]{
						ProcessElement: func(_ string, ctx *KeyedReadOnlyBroadcastContext[string], out Collector[int]) error {
							s, err := GetReadOnlyBroadcastState(ctx, desc)
							if err != nil {
								return err
							}
							out.Collect(size(s))
							return nil
						},
						ProcessBroadcastElement: func(v int, ctx *KeyedBroadcastContext[string], _ Collector[int]) error { return put(v, ctx) },
					}
				})
			a, b := Collect(plain), Collect(keyed)
			execute(t, env)
			for name, got := range map[string][]int{"non-keyed": a.Values(), "keyed": b.Values()} {
				if len(got) != len(words) {
					t.Fatalf("%s: %d records, want %d", name, len(got), len(words))
				}
				for _, n := range got {
					if n != len(rules) {
						t.Fatalf("%s: a record saw %d broadcast entries, want %d", name, n, len(rules))
					}
				}
			}
		})
	}
}
