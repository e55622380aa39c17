package streamtest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/state"
)

// command is an element of Flink's AbstractStreamOperatorTest.TestOperator:
// a key and a command for it.
type command struct {
	Key int
	Cmd string // SET_STATE:v, SET_EVENT_TIME_TIMER:t, SET_PROC_TIME_TIMER:t, EMIT_STATE
}

// commands is Flink's TestOperator as a KeyedProcessFunction: it sets the
// key's value state and its timers, and each timer emits the state.
func commands() stream.KeyedProcessFunction[int, command, string] {
	var st state.ValueState[string]
	return stream.KeyedProcessFunction[int, command, string]{
		Open: func(rc *stream.KeyedRuntimeContext[int]) (err error) {
			st, err = stream.GetState(rc, state.ValueDescriptor[string]{Name: "state"})
			return err
		},
		ProcessElement: func(c command, ctx *stream.KeyedContext[int], out stream.Collector[string]) error {
			name, arg, _ := strings.Cut(c.Cmd, ":")
			var at int64
			fmt.Sscan(arg, &at)
			switch name {
			case "SET_STATE":
				st.Update(arg)
			case "SET_EVENT_TIME_TIMER":
				ctx.RegisterEventTimeTimer(at)
			case "SET_PROC_TIME_TIMER":
				ctx.RegisterProcessingTimeTimer(at)
			case "EMIT_STATE":
				v, _ := st.Value()
				out.Collect(fmt.Sprintf("ON_ELEMENT:%d:%s", c.Key, v))
			default:
				return fmt.Errorf("unknown command %q", c.Cmd)
			}
			return nil
		},
		OnTimer: func(_ int64, ctx *stream.KeyedContext[int], out stream.Collector[string]) error {
			v, _ := st.Value()
			domain := "ON_EVENT_TIME"
			if ctx.TimeDomain() == stream.ProcessingTime {
				domain = "ON_PROC_TIME"
			}
			out.Collect(domain + ":" + v)
			return nil
		},
	}
}

func commandHarness(t *testing.T, maxP, p, subtask int) *Harness[command, string] {
	t.Helper()
	h, err := Keyed(Options{MaxParallelism: maxP, Parallelism: p, Subtask: subtask}, func(c command) int { return c.Key }, commands)
	must(t, err)
	return h
}

// extract is Flink's extractResult: the values emitted since the last
// call.
func extract[O any](h *Harness[command, O]) []O {
	var out []O
	for _, r := range h.Records() {
		out = append(out, r.Value)
	}
	h.ClearOutput()
	return out
}

func expectValues(t *testing.T, h *Harness[command, string], want ...string) {
	t.Helper()
	if got := extract(h); !slices.Equal(got, want) {
		t.Fatalf("emitted %q, want %q", got, want)
	}
}

// keyIn returns a key whose key group of maxP lies in [lo, hi] (Flink's
// getKeyInKeyGroupRange, deterministic).
func keyIn(t *testing.T, maxP, lo, hi int) int {
	t.Helper()
	hash, err := state.NewHashFunc[int]()
	must(t, err)
	for k := range 10000 {
		if g := state.KeyGroupForHash(hash(k), maxP); g >= lo && g <= hi {
			return k
		}
	}
	t.Fatalf("no key in key groups %d..%d", lo, hi)
	return 0
}

// owner returns the subtask of parallelism p that owns key.
func owner(t *testing.T, key, maxP, p int) int {
	t.Helper()
	hash, err := state.NewHashFunc[int]()
	must(t, err)
	return state.OperatorIndexForKeyGroup(maxP, p, state.KeyGroupForHash(hash(key), maxP))
}

// TestStateAndTimerStateShufflingScalingDown is Flink's
// AbstractStreamOperatorTest.testStateAndTimerStateShufflingScalingDown:
// the snapshots of two subtasks, repackaged, restore into one subtask
// with both keys' state and timers.
func TestStateAndTimerStateShufflingScalingDown(t *testing.T) {
	const maxP = 10
	key1, key2 := keyIn(t, maxP, 0, maxP/2-1), keyIn(t, maxP, maxP/2, maxP-1)
	var snaps [][]byte
	for i, c := range []struct {
		key   int
		at, v string
	}{{key1, "30", "HELLO"}, {key2, "40", "CIAO"}} {
		h := commandHarness(t, maxP, 2, i)
		must(t, h.ProcessWatermark(0))
		must(t, h.SetProcessingTime(0))
		for _, cmd := range []string{"SET_EVENT_TIME_TIMER:" + c.at, "SET_PROC_TIME_TIMER:" + c.at, "SET_STATE:" + c.v} {
			must(t, h.ProcessElement(command{c.key, cmd}, 0))
		}
		snap, err := h.Snapshot()
		must(t, err)
		snaps = append(snaps, snap)
		must(t, h.Close())
	}
	repackaged, err := Repackage(snaps...)
	must(t, err)
	h3 := commandHarness(t, maxP, 1, 0)
	defer h3.Close()
	must(t, h3.Restore(repackaged))
	must(t, h3.ProcessWatermark(30))
	expectValues(t, h3, "ON_EVENT_TIME:HELLO")
	must(t, h3.ProcessWatermark(40))
	expectValues(t, h3, "ON_EVENT_TIME:CIAO")
	must(t, h3.SetProcessingTime(30))
	expectValues(t, h3, "ON_PROC_TIME:HELLO")
	must(t, h3.SetProcessingTime(40))
	expectValues(t, h3, "ON_PROC_TIME:CIAO")
}

// TestStateAndTimerStateShufflingScalingUp is Flink's
// testStateAndTimerStateShufflingScalingUp: one subtask's snapshot
// restores into two, each with the state and timers of its keys only.
func TestStateAndTimerStateShufflingScalingUp(t *testing.T) {
	const maxP = 10
	key1, key2 := keyIn(t, maxP, 0, maxP/2-1), keyIn(t, maxP, maxP/2, maxP-1)
	h := commandHarness(t, maxP, 1, 0)
	must(t, h.ProcessWatermark(0))
	must(t, h.SetProcessingTime(0))
	for _, c := range []command{
		{key1, "SET_EVENT_TIME_TIMER:10"}, {key2, "SET_EVENT_TIME_TIMER:20"},
		{key1, "SET_PROC_TIME_TIMER:10"}, {key2, "SET_PROC_TIME_TIMER:20"},
		{key1, "SET_STATE:HELLO"}, {key2, "SET_STATE:CIAO"},
	} {
		must(t, h.ProcessElement(c, 0))
	}
	expectValues(t, h)
	snap, err := h.Snapshot()
	must(t, err)
	must(t, h.Close())
	repackaged, err := Repackage(snap)
	must(t, err)

	h1 := commandHarness(t, maxP, 2, 0)
	defer h1.Close()
	must(t, h1.Restore(repackaged))
	must(t, h1.ProcessWatermark(10))
	expectValues(t, h1, "ON_EVENT_TIME:HELLO")
	must(t, h1.ProcessWatermark(20)) // key2's timer is in the other subtask
	expectValues(t, h1)
	must(t, h1.SetProcessingTime(10))
	expectValues(t, h1, "ON_PROC_TIME:HELLO")
	must(t, h1.SetProcessingTime(20))
	expectValues(t, h1)

	h2 := commandHarness(t, maxP, 2, 1)
	defer h2.Close()
	must(t, h2.Restore(repackaged))
	must(t, h2.ProcessWatermark(10))
	expectValues(t, h2)
	must(t, h2.ProcessWatermark(20))
	expectValues(t, h2, "ON_EVENT_TIME:CIAO")
	must(t, h2.SetProcessingTime(10))
	expectValues(t, h2)
	must(t, h2.SetProcessingTime(20))
	expectValues(t, h2, "ON_PROC_TIME:CIAO")
}

// tally counts per key in value state, emits "key:count" per element and
// registers an event-time timer at 1000 + key that emits
// "timer key:count".
func tally() stream.KeyedProcessFunction[int, int, string] {
	var count state.ValueState[int]
	return stream.KeyedProcessFunction[int, int, string]{
		Open: func(rc *stream.KeyedRuntimeContext[int]) (err error) {
			count, err = stream.GetState(rc, state.ValueDescriptor[int]{Name: "count"})
			return err
		},
		ProcessElement: func(k int, ctx *stream.KeyedContext[int], out stream.Collector[string]) error {
			c, _ := count.Value()
			count.Update(c + 1)
			ctx.RegisterEventTimeTimer(int64(1000 + k))
			out.Collect(fmt.Sprintf("%d:%d", k, c+1))
			return nil
		},
		OnTimer: func(_ int64, ctx *stream.KeyedContext[int], out stream.Collector[string]) error {
			c, _ := count.Value()
			out.Collect(fmt.Sprintf("timer %d:%d", ctx.CurrentKey(), c))
			return nil
		},
	}
}

// TestRepackageRescalesKeyedState: three subtasks of a keyed counting
// function (128 key groups), each fed the keys it owns and at its own
// watermark, snapshot; the snapshots repackaged restore into 1, 2 and 4
// subtasks, each fed the keys it owns now. Every key's count goes on from
// where it was (the oracle: a map of counts), its timer fires once, on its
// new owner, with the final count, and each new subtask starts at the
// least watermark of the old subtasks whose key groups it takes.
func TestRepackageRescalesKeyedState(t *testing.T) {
	const maxP, oldP, keys = 128, 3, 40
	opts := func(p, i int) Options { return Options{MaxParallelism: maxP, Parallelism: p, Subtask: i} }
	counts := map[int]int{} // the oracle
	var snaps [][]byte
	oldWM := []int64{5, 7, 9}
	for i := range oldP {
		h, err := Keyed(opts(oldP, i), identity, tally)
		must(t, err)
		must(t, h.ProcessWatermark(oldWM[i]))
		for k := range keys {
			if owner(t, k, maxP, oldP) != i {
				continue
			}
			for range k%4 + 1 {
				must(t, h.ProcessElement(k, 10))
				counts[k]++
			}
		}
		if n := h.NumEventTimeTimers(); n == 0 {
			t.Fatalf("old subtask %d has no timer: it owns no key", i)
		}
		snap, err := h.Snapshot()
		must(t, err)
		snaps = append(snaps, snap)
		must(t, h.Close())
	}
	repackaged, err := Repackage(snaps...)
	must(t, err)
	// the least old watermark of the key groups each new subtask takes
	// (128 key groups: old subtasks 0..42, 43..85, 86..127)
	wantWM := map[int][]int64{1: {5}, 2: {5, 7}, 4: {5, 5, 7, 9}}
	for _, newP := range []int{1, 2, 4} {
		t.Run(fmt.Sprint(oldP, "to", newP), func(t *testing.T) {
			want := maps.Clone(counts)
			fired := map[int]int{}
			for i := range newP {
				h, err := Keyed(opts(newP, i), identity, tally)
				must(t, err)
				must(t, h.Restore(repackaged))
				must(t, h.Open())
				if got := h.CurrentWatermark(); got != wantWM[newP][i] {
					t.Errorf("subtask %d starts at watermark %d, want %d", i, got, wantWM[newP][i])
				}
				owned := 0
				for k := range keys {
					if owner(t, k, maxP, newP) != i {
						continue
					}
					owned++
					must(t, h.ProcessElement(k, 20))
					want[k]++
				}
				if n := h.NumEventTimeTimers(); n != owned {
					t.Errorf("subtask %d holds %d timers, want one per key it owns, %d", i, n, owned)
				}
				if n := h.NumKeyedStateEntries(); n != owned {
					t.Errorf("subtask %d holds %d state entries, want %d", i, n, owned)
				}
				must(t, h.ProcessWatermark(2000))
				for _, r := range h.Records() {
					var k, c int
					if _, err := fmt.Sscanf(r.Value, "timer %d:%d", &k, &c); err == nil {
						fired[k]++
						if owner(t, k, maxP, newP) != i || c != want[k] {
							t.Errorf("subtask %d: %q, want key %d's timer on subtask %d with count %d", i, r.Value, k, owner(t, k, maxP, newP), want[k])
						}
						continue
					}
					if _, err := fmt.Sscanf(r.Value, "%d:%d", &k, &c); err != nil || c != want[k] {
						t.Errorf("subtask %d emitted %q, want key %d at count %d", i, r.Value, k, want[k])
					}
				}
				must(t, h.Close())
			}
			for k := range keys {
				if fired[k] != 1 {
					t.Errorf("key %d's timer fired %d times, want once", k, fired[k])
				}
			}
		})
	}
}

// TestRepackageRefuses: Repackage takes one snapshot of every subtask of
// one parallelism, and a harness that sets another max parallelism than
// the snapshots' cannot restore them (Flink's rule for a restore).
func TestRepackageRefuses(t *testing.T) {
	// the first key each subtask of parallelism 2 owns, fed twice
	var key [2]int
	for i := range key {
		for owner(t, key[i], 16, 2) != i {
			key[i]++
		}
	}
	snap := func(p, i int) []byte {
		h, err := Keyed(Options{MaxParallelism: 16, Parallelism: p, Subtask: i}, identity, tally)
		must(t, err)
		must(t, h.ProcessElement(key[i], 0))
		must(t, h.ProcessElement(key[i], 0))
		b, err := h.Snapshot()
		must(t, err)
		must(t, h.Close())
		return b
	}
	s0, s1 := snap(2, 0), snap(2, 1)
	for name, bad := range map[string][][]byte{
		"one of two":      {s0},
		"the same twice":  {s0, s0},
		"three of two":    {s0, s1, s1},
		"not a harness's": {s0, {1, 2, 3}},
		"none":            {},
	} {
		if _, err := Repackage(bad...); err == nil {
			t.Errorf("%s: repackaged", name)
		}
	}
	ok, err := Repackage(s1, s0) // any order
	must(t, err)
	h, err := Keyed(Options{MaxParallelism: 32}, identity, tally)
	must(t, err)
	if err := h.Restore(ok); err == nil || !strings.Contains(err.Error(), "maximum parallelism") {
		t.Errorf("restored 16 key groups into 32: %v", err)
	}
	must(t, h.Close())
	h, err = Keyed(Options{}, identity, tally) // no max parallelism set: the snapshots' holds
	must(t, err)
	must(t, h.Restore(ok))
	must(t, h.ProcessWatermark(2000))
	var got []string
	for _, r := range h.Records() {
		got = append(got, r.Value)
	}
	slices.Sort(got)
	want := []string{fmt.Sprintf("timer %d:2", key[0]), fmt.Sprintf("timer %d:2", key[1])}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("restored without a max parallelism: %v, want %v", got, want)
	}
	must(t, h.Close())
}
