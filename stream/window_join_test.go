package stream

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
	"github.com/weirdata/weir/stream/window"
)

// joinEl is an element of a join test input: its key, event time and id.
type joinEl struct {
	K  string
	Ts int64
	ID int
}

// joinJitter bounds how far joinInput's timestamps are out of order.
const joinJitter = 4

// joinInput returns n elements over 4 keys with timestamps 100 + 3i moved
// by up to joinJitter either way, so the input is out of order; ids start
// at first.
func joinInput(seed uint64, n, first int) []joinEl {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]joinEl, n)
	for i := range out {
		out[i] = joinEl{K: fmt.Sprint("k", r.IntN(4)), Ts: int64(100 + 3*i + r.IntN(2*joinJitter+1) - joinJitter), ID: first + i}
	}
	return out
}

// joinModes are the modes the joins run in over bounded inputs, with the
// same results.
var joinModes = []Mode{Streaming, Batch, Automatic}

// runJoinModes builds a job over as and bs in every mode at parallelism 1
// and 2 and checks its "value@timestamp" lines against want. In STREAMING
// each source split emits the watermark largest timestamp - 2 *
// joinJitter - 1 after every element, so windows fire and state is cleaned
// while the input is still arriving, and no element is late.
func runJoinModes(t *testing.T, as, bs []joinEl, want []string, build func(a, b DataStream[joinEl]) DataStream[string]) {
	t.Helper()
	slices.Sort(want)
	if len(want) == 0 {
		t.Fatal("the oracle gives nothing")
	}
	strategy := watermark.ForGenerator(func(watermark.Context) watermark.Generator[joinEl] {
		maxTs := int64(math.MinInt64)
		return watermark.Punctuated(func(_ joinEl, ts int64) (int64, bool) {
			if ts <= maxTs {
				return 0, false
			}
			maxTs = ts
			return ts - 2*joinJitter - 1, true
		})
	}).WithTimestampAssigner(func(e joinEl, _ int64) int64 { return e.Ts })
	for _, mode := range joinModes {
		for _, p := range []int{1, 2} {
			env := New(Options{Parallelism: p, Mode: mode})
			a := FromSource(env, source.FromSlice(as), strategy, "a")
			b := FromSource(env, source.FromSlice(bs), strategy, "b")
			got := Collect(build(a, b))
			execute(t, env)
			var lines []string
			for _, r := range got.Records() {
				lines = append(lines, fmt.Sprintf("%s@%d", r.Value, r.Timestamp))
			}
			slices.Sort(lines)
			if !slices.Equal(lines, want) {
				t.Fatalf("mode %v p%d: %d lines, want %d\ngot  %v\nwant %v", mode, p, len(lines), len(want), lines, want)
			}
		}
	}
}

func joinKey(e joinEl) string { return e.K }

// naiveWindows returns, for every element of as and bs, the windows
// [start, end) holding it: tumbling and sliding windows by their
// definition, sessions by merging each key's elements of both inputs in
// timestamp order (an element joins the session when its timestamp is at
// most the session's end, as touching windows merge).
func naiveWindows(as, bs []joinEl, kind string, size, slide int64) (wa, wb [][][2]int64) {
	fixed := func(ts int64) [][2]int64 {
		var ws [][2]int64
		for s := ts - ts%slide; s > ts-size; s -= slide {
			ws = append(ws, [2]int64{s, s + size})
		}
		return ws
	}
	wa, wb = make([][][2]int64, len(as)), make([][][2]int64, len(bs))
	if kind != "session" {
		for i, e := range as {
			wa[i] = fixed(e.Ts)
		}
		for i, e := range bs {
			wb[i] = fixed(e.Ts)
		}
		return wa, wb
	}
	type ref struct {
		ts   int64
		side int
		i    int
	}
	byKey := map[string][]ref{}
	for i, e := range as {
		byKey[e.K] = append(byKey[e.K], ref{e.Ts, 0, i})
	}
	for i, e := range bs {
		byKey[e.K] = append(byKey[e.K], ref{e.Ts, 1, i})
	}
	for _, rs := range byKey {
		slices.SortFunc(rs, func(x, y ref) int { return int(x.ts - y.ts) })
		for lo := 0; lo < len(rs); {
			hi, end := lo+1, rs[lo].ts+size
			for hi < len(rs) && rs[hi].ts <= end {
				end = max(end, rs[hi].ts+size)
				hi++
			}
			w := [2]int64{rs[lo].ts, end}
			for _, r := range rs[lo:hi] {
				if r.side == 0 {
					wa[r.i] = [][2]int64{w}
				} else {
					wb[r.i] = [][2]int64{w}
				}
			}
			lo = hi
		}
	}
	return wa, wb
}

// TestWindowJoinModes checks WindowJoin over tumbling, sliding and session
// windows in STREAMING, BATCH and AUTOMATIC mode against a nested-loop
// join: every pair of one key in one window, at the window's end - 1.
func TestWindowJoinModes(t *testing.T) {
	as, bs := joinInput(1, 80, 0), joinInput(2, 70, 1000)
	cases := []struct {
		kind        string
		size, slide int64
		assigner    func() (window.Assigner[window.TimeWindow], error)
	}{
		{"tumbling", 10, 10, func() (window.Assigner[window.TimeWindow], error) {
			a := window.TumblingEventTimeWindows(10 * time.Millisecond)
			return a, a.Err()
		}},
		{"sliding", 12, 5, func() (window.Assigner[window.TimeWindow], error) {
			a := window.SlidingEventTimeWindows(12*time.Millisecond, 5*time.Millisecond)
			return a, a.Err()
		}},
		{"session", 2, 0, func() (window.Assigner[window.TimeWindow], error) {
			s := window.EventTimeSessionWindows(2 * time.Millisecond)
			return window.Assigner[window.TimeWindow](s), s.Err()
		}},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			assigner, err := c.assigner()
			if err != nil {
				t.Fatal(err)
			}
			wa, wb := naiveWindows(as, bs, c.kind, c.size, c.slide)
			var want []string
			for i, a := range as {
				for j, b := range bs {
					if a.K != b.K {
						continue
					}
					for _, w := range wa[i] {
						if slices.Contains(wb[j], w) {
							want = append(want, fmt.Sprintf("%d:%d@%d", a.ID, b.ID, w[1]-1))
						}
					}
				}
			}
			runJoinModes(t, as, bs, want, func(a, b DataStream[joinEl]) DataStream[string] {
				return JoinApply(WindowJoin(a, b, joinKey, joinKey, assigner), func(x, y joinEl) string { return fmt.Sprintf("%d:%d", x.ID, y.ID) })
			})
		})
	}
}

// TestWindowCoGroupModes checks WindowCoGroup over tumbling windows in
// every mode: one call per key and window holding elements of either
// input, with that window's elements of each (compared as sorted ids,
// the order within a window being the arrival order in STREAMING and the
// timestamp order in BATCH).
func TestWindowCoGroupModes(t *testing.T) {
	as, bs := joinInput(3, 60, 0), joinInput(4, 50, 1000)
	const size = 9
	groups := map[string][2][]int{}
	name := func(k string, ts int64) string { return fmt.Sprintf("%s@%d", k, ts-ts%size+size-1) }
	for _, a := range as {
		g := groups[name(a.K, a.Ts)]
		g[0] = append(g[0], a.ID)
		groups[name(a.K, a.Ts)] = g
	}
	for _, b := range bs {
		g := groups[name(b.K, b.Ts)]
		g[1] = append(g[1], b.ID)
		groups[name(b.K, b.Ts)] = g
	}
	var want []string
	for n, g := range groups {
		k, at, _ := strings.Cut(n, "@")
		slices.Sort(g[0])
		slices.Sort(g[1])
		want = append(want, fmt.Sprintf("%s%v%v@%s", k, g[0], g[1], at))
	}
	assigner := window.TumblingEventTimeWindows(size * time.Millisecond)
	if err := assigner.Err(); err != nil {
		t.Fatal(err)
	}
	runJoinModes(t, as, bs, want, func(a, b DataStream[joinEl]) DataStream[string] {
		return CoGroupApply(WindowCoGroup(a, b, joinKey, joinKey, assigner), func(xs, ys []joinEl, out Collector[string]) error {
			k := ""
			var ia, ib []int
			for _, x := range xs {
				k, ia = x.K, append(ia, x.ID)
			}
			for _, y := range ys {
				k, ib = y.K, append(ib, y.ID)
			}
			slices.Sort(ia)
			slices.Sort(ib)
			out.Collect(fmt.Sprintf("%s%v%v", k, ia, ib))
			return nil
		})
	})
}
