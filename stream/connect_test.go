package stream

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/weirdata/weir/stream/state"
)

func execute(t *testing.T, env *Env) {
	t.Helper()
	if _, err := env.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func sorted[T any](vs []T, cmp func(a, b T) int) []T {
	slices.SortFunc(vs, cmp)
	return vs
}

// TestUnion merges three streams: every record once.
func TestUnion(t *testing.T) {
	env := New(Options{Parallelism: 2})
	a := FromSlice(env, []int{1, 2, 3})
	b := Map(FromSlice(env, []int{10, 20}), func(v int) int { return v + 1 })
	c := FromSlice(env, []int{100}).SetParallelism(1)
	got := Collect(a.Union(b, c))
	execute(t, env)
	if have := sorted(got.Values(), compareInt); !slices.Equal(have, []int{1, 2, 3, 11, 21, 100}) {
		t.Fatalf("union: %v", have)
	}
}

func compareInt(a, b int) int { return a - b }

// TestConnectCoMap maps two streams of different types into one.
func TestConnectCoMap(t *testing.T) {
	env := New(Options{Parallelism: 2})
	nums := FromSlice(env, []int{1, 2, 3})
	words := FromSlice(env, []string{"x", "yy"})
	got := Collect(CoMap(Connect(nums, words),
		func(n int) string { return "n" + strconv.Itoa(n) },
		func(w string) string { return "w" + w }))
	execute(t, env)
	if have := sorted(got.Values(), compareString); !slices.Equal(have, []string{"n1", "n2", "n3", "wx", "wyy"}) {
		t.Fatalf("comap: %v", have)
	}
}

func compareString(a, b string) int { return compare(a, b) }

type order struct {
	User   string
	Amount int
}

// TestKeyedCoProcess joins two keyed streams through shared keyed state:
// limits of users (first input) and orders (second); an order above its
// user's limit goes to a side output, and at the end of input (the
// maximal watermark) a timer per user reports the accepted total.
// In BATCH both inputs are sorted by key and each key's timers fire at its
// end: the same answer.
func TestKeyedCoProcess(t *testing.T) {
	for _, p := range []int{1, 3} {
		for _, mode := range []Mode{Streaming, Batch} {
			t.Run(fmt.Sprint("p", p, "mode", mode), func(t *testing.T) {
				env := New(Options{Parallelism: p, Mode: mode})
				limits := KeyBy(FromSlice(env, []order{{"ann", 10}, {"bob", 5}, {"cid", 1}}).SetParallelism(1), func(o order) string { return o.User })
				orders := KeyBy(FromSlice(env, []order{{"ann", 3}, {"bob", 7}, {"ann", 12}, {"cid", 1}, {"bob", 5}}).SetParallelism(1), func(o order) string { return o.User })
				rejected := NewOutputTag[order]("rejected")
				totals := KeyedCoProcess(ConnectKeyed(limits, orders), func() KeyedCoProcessFunction[string, order, order, string] {
					var limit, total state.ValueState[int]
					var pending state.ListState[order]
					return KeyedCoProcessFunction[string, order, order, string]{
						Open: func(rc *KeyedRuntimeContext[string]) (err error) {
							if limit, err = GetState(rc, state.ValueDescriptor[int]{Name: "limit"}); err != nil {
								return err
							}
							if pending, err = GetListState(rc, state.ListDescriptor[order]{Name: "pending"}); err != nil {
								return err
							}
							total, err = GetState(rc, state.ValueDescriptor[int]{Name: "total"})
							return err
						},
						ProcessElement1: func(o order, ctx *KeyedContext[string], _ Collector[string]) error {
							limit.Update(o.Amount)
							ctx.RegisterEventTimeTimer(1000)
							return nil
						},
						ProcessElement2: func(o order, ctx *KeyedContext[string], _ Collector[string]) error {
							pending.Add(o) // the limit may come later: decide at the timer
							ctx.RegisterEventTimeTimer(1000)
							return nil
						},
						OnTimer: func(ts int64, ctx *KeyedContext[string], out Collector[string]) error {
							l, _ := limit.Value()
							sum, _ := total.Value()
							for _, o := range pending.Get() {
								if o.Amount > l {
									Output(ctx, rejected, o)
								} else {
									sum += o.Amount
								}
							}
							total.Update(sum)
							out.Collect(fmt.Sprintf("%s=%d@%d", ctx.CurrentKey(), sum, ts))
							return nil
						},
					}
				})
				got := Collect(totals)
				rej := Collect(GetSideOutput(totals, rejected))
				execute(t, env)
				if have := sorted(got.Values(), compareString); !slices.Equal(have, []string{"ann=3@1000", "bob=5@1000", "cid=1@1000"}) {
					t.Errorf("totals: %v", have)
				}
				have := sorted(rej.Values(), func(a, b order) int { return compare(a.User, b.User) })
				if !slices.Equal(have, []order{{"ann", 12}, {"bob", 7}}) {
					t.Errorf("rejected: %v", have)
				}
			})
		}
	}
}

// TestSideOutputs splits a stream: odd numbers to a side output of
// strings, even ones to the main output, from a non-keyed Process.
func TestSideOutputs(t *testing.T) {
	env := New(Options{Parallelism: 2})
	odd := NewOutputTag[string]("odd")
	main := Process(FromSlice(env, []int{1, 2, 3, 4, 5, 6, 7}), func() ProcessFunction[int, int] {
		return ProcessFunction[int, int]{ProcessElement: func(v int, ctx *Context, out Collector[int]) error {
			if v%2 == 1 {
				Output(ctx, odd, strconv.Itoa(v))
				return nil
			}
			out.Collect(v * 10)
			return nil
		}}
	})
	evens := Collect(main)
	odds := Collect(GetSideOutput(main, odd))
	execute(t, env)
	if have := sorted(evens.Values(), compareInt); !slices.Equal(have, []int{20, 40, 60}) {
		t.Errorf("main: %v", have)
	}
	if have := sorted(odds.Values(), compareString); !slices.Equal(have, []string{"1", "3", "5", "7"}) {
		t.Errorf("side: %v", have)
	}
}

// TestCoProcess: a non-keyed two-input function sees each input's records
// with their timestamps (none from FromSlice) and emits to one stream.
func TestCoProcess(t *testing.T) {
	env := New(Options{Parallelism: 2})
	nums := FromSlice(env, []int{1, 2})
	words := FromSlice(env, []string{"x"})
	out := CoProcess(Connect(nums, words), func() CoProcessFunction[int, string, string] {
		return CoProcessFunction[int, string, string]{
			ProcessElement1: func(v int, ctx *Context, out Collector[string]) error {
				if _, ok := ctx.Timestamp(); ok {
					t.Error("a timestamp from FromSlice")
				}
				out.Collect("1:" + strconv.Itoa(v))
				return nil
			},
			ProcessElement2: func(v string, _ *Context, out Collector[string]) error {
				out.Collect("2:" + v)
				return nil
			},
		}
	})
	got := Collect(out)
	execute(t, env)
	if have := sorted(got.Values(), compareString); !slices.Equal(have, []string{"1:1", "1:2", "2:x"}) {
		t.Fatalf("coprocess: %v", have)
	}
}
