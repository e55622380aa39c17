package stream

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

// TestModesAgree runs one bounded program over random events (keys,
// timestamps, maxima per 10 ms window through keyed map state and
// event-time timers under a bound that covers the disorder, then a rolling
// sum of the window maxima per key) in STREAMING,
// BATCH and AUTOMATIC at parallelism 1 to 3: every run ends with the same
// final answer, the one a naive computation gives.
func TestModesAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	var events []event
	for range 2000 {
		events = append(events, event{Key: fmt.Sprint("k", r.IntN(13)), TS: int64(r.IntN(500))})
	}
	// naive: per key and window, the largest timestamp; per key, the sum
	// of its windows' maxima
	maxima := map[string]map[int64]int64{}
	for _, e := range events {
		if maxima[e.Key] == nil {
			maxima[e.Key] = map[int64]int64{}
		}
		w := e.TS - e.TS%10 + 9
		maxima[e.Key][w] = max(maxima[e.Key][w], e.TS)
	}
	var want []string
	for k, ws := range maxima {
		var s int64
		for _, m := range ws {
			s += m
		}
		want = append(want, fmt.Sprintf("%s=%d", k, s))
	}
	slices.Sort(want)

	type keySum struct {
		Key string
		Sum int64
	}
	for _, p := range []int{1, 2, 3} {
		for _, mode := range []Mode{Streaming, Batch, Automatic} {
			env := New(Options{Parallelism: p, Mode: mode, AutoWatermarkInterval: time.Millisecond})
			strategy := watermark.ForBoundedOutOfOrderness[event](500 * time.Millisecond).WithTimestampAssigner(func(e event, _ int64) int64 { return e.TS })
			src := FromSource(env, source.FromSlice(events, source.BatchSize(37)), strategy, "events")
			windows := KeyedProcess(KeyBy(src, func(e event) string { return e.Key }), func() KeyedProcessFunction[string, event, keySum] {
				var m *state.Map[string, state.Void, int64, int64]
				return KeyedProcessFunction[string, event, keySum]{
					Open: func(rc *KeyedRuntimeContext[string]) (err error) {
						m, err = state.NewMap[string, state.Void, int64, int64](rc.Backend(), state.MapDescriptor[int64, int64]{Name: "max"})
						return err
					},
					ProcessElement: func(e event, ctx *KeyedContext[string], _ Collector[keySum]) error {
						w := e.TS - e.TS%10 + 9
						if cur, ok := m.Get(w); !ok || e.TS > cur {
							m.Put(w, e.TS)
						}
						ctx.RegisterEventTimeTimer(w)
						return nil
					},
					OnTimer: func(ts int64, ctx *KeyedContext[string], out Collector[keySum]) error {
						v, _ := m.Get(ts)
						m.Remove(ts)
						out.Collect(keySum{ctx.CurrentKey(), v})
						return nil
					},
				}
			})
			sums := Sum(KeyBy(windows, func(k keySum) string { return k.Key }),
				func(k keySum) int64 { return k.Sum }, func(k *keySum, v int64) { k.Sum = v })
			got := Collect(sums)
			execute(t, env)
			final := map[string]int64{}
			for _, v := range got.Values() {
				final[v.Key] = max(final[v.Key], v.Sum)
			}
			var have []string
			for k, s := range final {
				have = append(have, fmt.Sprintf("%s=%d", k, s))
			}
			slices.Sort(have)
			if !slices.Equal(have, want) {
				t.Errorf("p%d mode %d:\ngot  %v\nwant %v", p, mode, have, want)
			}
		}
	}
}
