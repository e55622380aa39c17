package streamtest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

var (
	bcState  = stream.MapStateDescriptor[string, int]{Name: "broadcast-state"}
	bcStateA = stream.MapStateDescriptor[int, string]{Name: "broadcast-state-A"}
)

func srec(v string, ts int64) Item[string] {
	return Item[string]{Record: stream.Record[string]{Value: v, Timestamp: ts}}
}
func swm(w int64) Item[string] { return Item[string]{Watermark: w, IsWatermark: true} }

func expectItems(t *testing.T, got, want []Item[string]) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// registering follows Flink's CoBroadcastWithNonKeyedOperatorTest
// TestFunction: a broadcast record puts itself under every key of keys;
// both sides emit the value, the watermark and the timestamp.
func registering(t *testing.T, keys ...string) func() stream.BroadcastProcessFunction[string, int, string] {
	return func() stream.BroadcastProcessFunction[string, int, string] {
		return stream.BroadcastProcessFunction[string, int, string]{
			ProcessBroadcastElement: func(v int, ctx *stream.BroadcastContext, out stream.Collector[string]) error {
				s, err := stream.GetBroadcastState(ctx, bcState)
				if err != nil {
					return err
				}
				for _, k := range keys {
					s.Put(k, v)
				}
				ts, _ := ctx.Timestamp()
				out.Collect(fmt.Sprintf("%dWM:%d TS:%d", v, ctx.CurrentWatermark(), ts))
				return nil
			},
			ProcessElement: func(v string, ctx *stream.ReadOnlyBroadcastContext, out stream.Collector[string]) error {
				s, err := stream.GetReadOnlyBroadcastState(ctx, bcState)
				if err != nil {
					return err
				}
				got := slices.Sorted(maps.Keys(maps.Collect(s.All())))
				if !slices.Equal(got, keys) {
					t.Errorf("broadcast state keys %v, want %v", got, keys)
				}
				ts, _ := ctx.Timestamp()
				out.Collect(fmt.Sprintf("%sWM:%d TS:%d", v, ctx.CurrentWatermark(), ts))
				return nil
			},
		}
	}
}

// TestBroadcastState follows Flink's
// CoBroadcastWithNonKeyedOperatorTest.testBroadcastState: the non-broadcast
// side reads what the broadcast side put; records keep their timestamps
// and the watermark passes in order.
func TestBroadcastState(t *testing.T) {
	h, err := Broadcast(Options{}, registering(t, "test1", "test2", "test3"), bcState)
	must(t, err)
	defer h.Close()
	must(t, h.ProcessWatermark(10))
	must(t, h.ProcessElement2(5, 12))
	must(t, h.ProcessWatermark(40))
	must(t, h.ProcessElement1("6", 13))
	must(t, h.ProcessElement1("6", 15))
	must(t, h.ProcessWatermark(50))
	expectItems(t, h.Output(), []Item[string]{
		swm(10), srec("5WM:10 TS:12", 12), swm(40), srec("6WM:40 TS:13", 13), srec("6WM:40 TS:15", 15), swm(50),
	})
}

// TestBroadcastMultiState follows Flink's
// CoBroadcastWithNonKeyedOperatorTest.testMultiStateSupport: two broadcast
// states of different types side by side. Flink's order is its HashMap's;
// the entries are compared as a set.
func TestBroadcastMultiState(t *testing.T) {
	h, err := Broadcast(Options{}, func() stream.BroadcastProcessFunction[string, int, string] {
		return stream.BroadcastProcessFunction[string, int, string]{
			ProcessBroadcastElement: func(v int, ctx *stream.BroadcastContext, _ stream.Collector[string]) error {
				s, err := stream.GetBroadcastState(ctx, bcState)
				if err != nil {
					return err
				}
				a, err := stream.GetBroadcastState(ctx, bcStateA)
				if err != nil {
					return err
				}
				s.Put("key."+strconv.Itoa(v), v)
				a.Put(v, "value."+strconv.Itoa(v))
				return nil
			},
			ProcessElement: func(v string, ctx *stream.ReadOnlyBroadcastContext, out stream.Collector[string]) error {
				s, err := stream.GetReadOnlyBroadcastState(ctx, bcState)
				if err != nil {
					return err
				}
				a, err := stream.GetReadOnlyBroadcastState(ctx, bcStateA)
				if err != nil {
					return err
				}
				for k, n := range s.All() {
					out.Collect(fmt.Sprintf("%s:%s->%d", v, k, n))
				}
				for k, n := range a.All() {
					out.Collect(fmt.Sprintf("%s:%d->%s", v, k, n))
				}
				return nil
			},
		}
	}, bcState, bcStateA)
	must(t, err)
	defer h.Close()
	must(t, h.ProcessElement2(5, 12))
	must(t, h.ProcessElement2(6, 13))
	must(t, h.ProcessElement1("9", 15))
	var got []string
	for _, r := range h.Records() {
		if r.Timestamp != 15 {
			t.Fatalf("timestamp %d, want 15", r.Timestamp)
		}
		got = append(got, r.Value)
	}
	slices.Sort(got)
	want := []string{"9:5->value.5", "9:6->value.6", "9:key.5->5", "9:key.6->6"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestBroadcastSideOutput follows Flink's
// CoBroadcastWithNonKeyedOperatorTest.testSideOutput.
func TestBroadcastSideOutput(t *testing.T) {
	brTag, nonBrTag := stream.NewOutputTag[string]("br-out"), stream.NewOutputTag[string]("non-br-out")
	h, err := New2(Options{}, func(a stream.DataStream[string], b stream.DataStream[int]) stream.DataStream[string] {
		out := stream.BroadcastProcess(stream.ConnectBroadcast(a, stream.Broadcast(b, bcState)), func() stream.BroadcastProcessFunction[string, int, string] {
			return stream.BroadcastProcessFunction[string, int, string]{
				ProcessBroadcastElement: func(v int, ctx *stream.BroadcastContext, _ stream.Collector[string]) error {
					ts, _ := ctx.Timestamp()
					stream.Output(ctx, brTag, fmt.Sprintf("BR:%d WM:%d TS:%d", v, ctx.CurrentWatermark(), ts))
					return nil
				},
				ProcessElement: func(v string, ctx *stream.ReadOnlyBroadcastContext, _ stream.Collector[string]) error {
					ts, _ := ctx.Timestamp()
					stream.Output(ctx, nonBrTag, fmt.Sprintf("NON-BR:%s WM:%d TS:%d", v, ctx.CurrentWatermark(), ts))
					return nil
				},
			}
		})
		stream.GetSideOutput(out, brTag)
		stream.GetSideOutput(out, nonBrTag)
		return out
	})
	must(t, err)
	defer h.Close()
	must(t, h.ProcessWatermark(10))
	must(t, h.ProcessElement2(5, 12))
	must(t, h.ProcessWatermark(40))
	must(t, h.ProcessElement1("6", 13))
	must(t, h.ProcessElement1("6", 15))
	must(t, h.ProcessWatermark(50))
	if got, err := SideOutput(h, brTag); err != nil || !slices.Equal(got, []stream.Record[string]{{Value: "BR:5 WM:10 TS:12", Timestamp: 12}}) {
		t.Fatalf("br side output %v (%v)", got, err)
	}
	want := []stream.Record[string]{{Value: "NON-BR:6 WM:40 TS:13", Timestamp: 13}, {Value: "NON-BR:6 WM:40 TS:15", Timestamp: 15}}
	if got, err := SideOutput(h, nonBrTag); err != nil || !slices.Equal(got, want) {
		t.Fatalf("non-br side output %v (%v), want %v", got, err, want)
	}
}

// entries emits the broadcast state's entries as "k=v" when a record comes
// (Flink's TestFunctionWithOutput).
func entries() stream.BroadcastProcessFunction[string, int, string] {
	return stream.BroadcastProcessFunction[string, int, string]{
		ProcessBroadcastElement: func(v int, ctx *stream.BroadcastContext, _ stream.Collector[string]) error {
			s, err := stream.GetBroadcastState(ctx, bcState)
			if err != nil {
				return err
			}
			for _, k := range []string{"test1", "test2", "test3"} {
				s.Put(k, v)
			}
			return nil
		},
		ProcessElement: func(_ string, ctx *stream.ReadOnlyBroadcastContext, out stream.Collector[string]) error {
			s, err := stream.GetReadOnlyBroadcastState(ctx, bcState)
			if err != nil {
				return err
			}
			for k, v := range s.All() {
				out.Collect(fmt.Sprintf("%s=%d", k, v))
			}
			return nil
		},
	}
}

func values(rs []stream.Record[string]) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Value)
	}
	slices.Sort(out)
	return out
}

// TestBroadcastRescale follows Flink's CoBroadcastWithNonKeyedOperatorTest
// testScaleUp and testScaleDown: every instance snapshots the same
// broadcast state, and every instance of the new parallelism restores a
// copy (new subtask i from old subtask i % old parallelism).
func TestBroadcastRescale(t *testing.T) {
	for _, tc := range []struct{ from, to int }{{2, 3}, {3, 2}, {2, 2}} {
		t.Run(fmt.Sprintf("%d-to-%d", tc.from, tc.to), func(t *testing.T) {
			var snaps [][]byte
			for i := range tc.from {
				h, err := Broadcast(Options{Parallelism: tc.from, Subtask: i, MaxParallelism: 10}, entries, bcState)
				must(t, err)
				must(t, h.ProcessElement2(3, watermark.Min))
				snap, err := h.Snapshot()
				must(t, err)
				must(t, h.Close())
				snaps = append(snaps, snap)
			}
			for i := range tc.to {
				h, err := Broadcast(Options{Parallelism: tc.to, Subtask: i, MaxParallelism: 10}, entries, bcState)
				must(t, err)
				must(t, h.Restore(snaps[i%tc.from]))
				must(t, h.ProcessElement1("trigger", watermark.Min))
				if got, want := values(h.Records()), []string{"test1=3", "test2=3", "test3=3"}; !slices.Equal(got, want) {
					t.Fatalf("subtask %d: %v, want %v", i, got, want)
				}
				must(t, h.Close())
			}
		})
	}
}

// TestBroadcastUnknownState: a descriptor not given to Broadcast is an
// error, as Flink's "The requested state does not exist".
func TestBroadcastUnknownState(t *testing.T) {
	h, err := Broadcast(Options{}, func() stream.BroadcastProcessFunction[string, int, string] {
		return stream.BroadcastProcessFunction[string, int, string]{
			ProcessBroadcastElement: func(int, *stream.BroadcastContext, stream.Collector[string]) error { return nil },
			ProcessElement: func(_ string, ctx *stream.ReadOnlyBroadcastContext, _ stream.Collector[string]) error {
				_, err := stream.GetReadOnlyBroadcastState(ctx, bcStateA)
				return err
			},
		}
	}, bcState)
	must(t, err)
	defer h.Close()
	if err := h.ProcessElement1("x", 1); err == nil {
		t.Fatal("reading an unregistered broadcast state succeeded")
	}
}

// timerOnKeyed is Flink's FunctionWithTimerOnKeyed.
func timerOnKeyed(t *testing.T, timerTS int64, expectedKey string) func() stream.KeyedBroadcastProcessFunction[string, string, int, string] {
	return func() stream.KeyedBroadcastProcessFunction[string, string, int, string] {
		return stream.KeyedBroadcastProcessFunction[string, string, int, string]{
			ProcessBroadcastElement: func(v int, ctx *stream.KeyedBroadcastContext[string], out stream.Collector[string]) error {
				ts, _ := ctx.Timestamp()
				out.Collect(fmt.Sprintf("BR:%d WM:%d TS:%d", v, ctx.CurrentWatermark(), ts))
				return nil
			},
			ProcessElement: func(v string, ctx *stream.KeyedReadOnlyBroadcastContext[string], out stream.Collector[string]) error {
				ctx.RegisterEventTimeTimer(timerTS)
				ts, _ := ctx.Timestamp()
				out.Collect(fmt.Sprintf("NON-BR:%s WM:%d TS:%d", v, ctx.CurrentWatermark(), ts))
				return nil
			},
			OnTimer: func(ts int64, ctx *stream.KeyedReadOnlyBroadcastContext[string], out stream.Collector[string]) error {
				if k := ctx.CurrentKey(); k != expectedKey {
					t.Errorf("timer key %q, want %q", k, expectedKey)
				}
				out.Collect("TIMER:" + strconv.FormatInt(ts, 10))
				return nil
			},
		}
	}
}

func identityString(s string) string { return s }

// TestKeyedBroadcastTimer follows Flink's
// CoBroadcastWithKeyedOperatorTest.testFunctionWithTimer: the keyed side
// registers an event-time timer that fires with its key current, before
// the watermark passes.
func TestKeyedBroadcastTimer(t *testing.T) {
	h, err := KeyedBroadcast(Options{}, identityString, timerOnKeyed(t, 41, "6"), bcState)
	must(t, err)
	defer h.Close()
	must(t, h.ProcessWatermark(10))
	must(t, h.ProcessElement2(5, 12))
	must(t, h.ProcessWatermark(40))
	must(t, h.ProcessElement1("6", 13))
	must(t, h.ProcessElement1("6", 15))
	must(t, h.ProcessWatermark(50))
	expectItems(t, h.Output(), []Item[string]{
		swm(10), srec("BR:5 WM:10 TS:12", 12), swm(40),
		srec("NON-BR:6 WM:40 TS:13", 13), srec("NON-BR:6 WM:40 TS:15", 15), srec("TIMER:41", 41), swm(50),
	})
}

// listOnKeyed adds every keyed record to a list state and, per broadcast
// record, emits "key:list" for every key through ApplyToKeyedState
// (Flink's StatefulFunctionWithKeyedStateAccessedOnBroadcast).
func listOnKeyed() stream.KeyedBroadcastProcessFunction[string, string, int, string] {
	var list state.ListState[string]
	return stream.KeyedBroadcastProcessFunction[string, string, int, string]{
		Open: func(rc *stream.KeyedRuntimeContext[string]) (err error) {
			list, err = stream.GetListState(rc, state.ListDescriptor[string]{Name: "listStateTest"})
			return err
		},
		ProcessElement: func(v string, _ *stream.KeyedReadOnlyBroadcastContext[string], _ stream.Collector[string]) error {
			list.Add(v)
			return nil
		},
		ProcessBroadcastElement: func(_ int, ctx *stream.KeyedBroadcastContext[string], out stream.Collector[string]) error {
			return stream.ApplyToKeyedState(ctx, list, func(key string, s state.ListState[string]) error {
				out.Collect(fmt.Sprintf("%s:%v", key, s.Get()))
				return nil
			})
		},
	}
}

// TestKeyedBroadcastApplyToKeyedState follows Flink's
// CoBroadcastWithKeyedOperatorTest.testAccessToKeyedStateIt: the broadcast
// side visits every key's list state.
func TestKeyedBroadcastApplyToKeyedState(t *testing.T) {
	h, err := KeyedBroadcast(Options{}, identityString, listOnKeyed, bcState)
	must(t, err)
	defer h.Close()
	for _, v := range []string{"test1", "test1", "test2", "test2", "test2", "test3", "test3", "test3", "test2"} {
		must(t, h.ProcessElement1(v, 12))
	}
	must(t, h.ProcessElement2(1, 13))
	want := []string{
		"test1:[test1 test1]",
		"test2:[test2 test2 test2 test2]",
		"test3:[test3 test3 test3]",
	}
	if got := values(h.Records()); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestKeyedBroadcastNoKeyedStateOnBroadcastSide follows Flink's
// CoBroadcastWithKeyedOperatorTest.testNoKeyedStateOnBroadcastSide: keyed
// state used on the broadcast side outside ApplyToKeyedState fails, as no
// key is current there.
func TestKeyedBroadcastNoKeyedStateOnBroadcastSide(t *testing.T) {
	h, err := KeyedBroadcast(Options{}, identityString, func() stream.KeyedBroadcastProcessFunction[string, string, int, string] {
		var v state.ValueState[string]
		return stream.KeyedBroadcastProcessFunction[string, string, int, string]{
			Open: func(rc *stream.KeyedRuntimeContext[string]) (err error) {
				v, err = stream.GetState(rc, state.ValueDescriptor[string]{Name: "any"})
				return err
			},
			ProcessElement: func(s string, _ *stream.KeyedReadOnlyBroadcastContext[string], _ stream.Collector[string]) error {
				v.Update(s)
				return nil
			},
			ProcessBroadcastElement: func(int, *stream.KeyedBroadcastContext[string], stream.Collector[string]) error {
				v.Update("nope")
				return nil
			},
		}
	}, bcState)
	must(t, err)
	defer h.Close()
	must(t, h.ProcessElement1("a", 1))
	if err := h.ProcessElement2(5, 2); !errors.Is(err, state.ErrNoKey) {
		t.Fatalf("keyed state on the broadcast side: %v, want ErrNoKey", err)
	}
}

// TestKeyedBroadcastRescale follows Flink's
// CoBroadcastWithKeyedOperatorTest testScaleUp and testScaleDown: the
// broadcast state restores whole into every new instance, the keyed state
// by key group.
func TestKeyedBroadcastRescale(t *testing.T) {
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	for _, tc := range []struct{ from, to int }{{2, 3}, {3, 2}} {
		t.Run(fmt.Sprintf("%d-to-%d", tc.from, tc.to), func(t *testing.T) {
			opts := func(p, i int) Options { return Options{Parallelism: p, Subtask: i, MaxParallelism: 10} }
			fn := func() stream.KeyedBroadcastProcessFunction[string, string, int, string] {
				f := listOnKeyed()
				apply := f.ProcessBroadcastElement
				f.ProcessBroadcastElement = func(v int, ctx *stream.KeyedBroadcastContext[string], out stream.Collector[string]) error {
					if v < 0 {
						return apply(v, ctx, out)
					}
					s, err := stream.GetBroadcastState(ctx, bcState)
					if err != nil {
						return err
					}
					s.Put("rule", v)
					return nil
				}
				f.OnTimer = func(_ int64, ctx *stream.KeyedReadOnlyBroadcastContext[string], out stream.Collector[string]) error {
					s, err := stream.GetReadOnlyBroadcastState(ctx, bcState)
					if err != nil {
						return err
					}
					n, _ := s.Get("rule")
					out.Collect(fmt.Sprintf("%s rule=%d", ctx.CurrentKey(), n))
					return nil
				}
				pe := f.ProcessElement
				f.ProcessElement = func(v string, ctx *stream.KeyedReadOnlyBroadcastContext[string], out stream.Collector[string]) error {
					ctx.RegisterEventTimeTimer(100)
					return pe(v, ctx, out)
				}
				return f
			}
			hash, err := state.NewHashFunc[string]()
			must(t, err)
			owner := func(k string, p int) int {
				return state.OperatorIndexForKeyGroup(10, p, state.KeyGroupForHash(hash(k), 10))
			}
			snaps := make([][]byte, tc.from)
			for i := range tc.from {
				h, err := KeyedBroadcast(opts(tc.from, i), identityString, fn, bcState)
				must(t, err)
				must(t, h.ProcessElement2(7, 1))
				for _, k := range keys {
					if owner(k, tc.from) == i {
						must(t, h.ProcessElement1(k, 2))
					}
				}
				snaps[i], err = h.Snapshot()
				must(t, err)
				must(t, h.Close())
			}
			for i := range tc.to {
				old := i % tc.from
				h, err := KeyedBroadcast(opts(tc.to, i), identityString, fn, bcState)
				must(t, err)
				must(t, h.Restore(snaps[old]))
				must(t, h.ProcessWatermark(100))
				// the keys of the old snapshot this subtask owns fire their
				// timers, and every one reads the restored broadcast state
				var want []string
				for _, k := range keys {
					if owner(k, tc.from) == old && owner(k, tc.to) == i {
						want = append(want, k+" rule=7")
					}
				}
				if got := values(h.Records()); !slices.Equal(got, want) {
					t.Fatalf("subtask %d restored from %d: %v, want %v", i, old, got, want)
				}
				must(t, h.Close())
			}
		})
	}
}
