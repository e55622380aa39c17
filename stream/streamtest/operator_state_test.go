package streamtest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/state"
)

// buffering is Flink's BufferingSink example of CheckpointedFunction (the
// "Using Operator State" documentation) as a Process function: it buffers
// elements and emits them together once threshold have come; snapshotState
// copies the buffer into the list state "buffered-elements" and
// initializeState restores it.
func buffering(threshold int, restored *bool) func() stream.ProcessFunction[int, string] {
	return func() stream.ProcessFunction[int, string] {
		var buf []int
		var ls state.ListState[int]
		return stream.ProcessFunction[int, string]{
			InitializeState: func(store *state.OperatorStore, isRestored bool) error {
				var err error
				ls, err = state.GetOperatorListState(store, state.ListDescriptor[int]{Name: "buffered-elements"})
				if err != nil {
					return err
				}
				*restored = isRestored
				buf = append(buf, ls.Get()...)
				return nil
			},
			SnapshotState: func(int64) error {
				ls.Update(buf)
				return nil
			},
			ProcessElement: func(v int, _ *stream.Context, out stream.Collector[string]) error {
				buf = append(buf, v)
				if len(buf) == threshold {
					out.Collect(fmt.Sprint(buf))
					buf = buf[:0]
				}
				return nil
			},
		}
	}
}

// TestProcessOperatorState: the buffer a snapshot took is what the restored
// function starts from, so the first batch after the restore holds the
// elements from before it.
func TestProcessOperatorState(t *testing.T) {
	var restored bool
	build := func(in stream.DataStream[int]) stream.DataStream[string] {
		return stream.Process(in, buffering(3, &restored))
	}
	h, err := New(Options{}, build)
	must(t, err)
	for _, v := range []int{1, 2, 3, 4, 5} {
		must(t, h.ProcessElement(v, 0))
	}
	snap, err := h.Snapshot()
	must(t, err)
	must(t, h.ProcessElement(6, 0)) // after the snapshot: lost with the failure
	if restored {
		t.Error("a fresh function was told it was restored")
	}
	var got []string
	for _, r := range h.Records() {
		got = append(got, r.Value)
	}
	if !slices.Equal(got, []string{"[1 2 3]", "[4 5 6]"}) {
		t.Fatalf("before the restore: %v", got)
	}
	must(t, h.Close())

	h2, err := New(Options{}, build)
	must(t, err)
	must(t, h2.Restore(snap))
	must(t, h2.ProcessElement(7, 0))
	if !restored {
		t.Error("a restored function was told it was not")
	}
	got = got[:0]
	for _, r := range h2.Records() {
		got = append(got, r.Value)
	}
	if !slices.Equal(got, []string{"[4 5 7]"}) {
		t.Fatalf("after the restore: %v, want [4 5 7]", got)
	}
	must(t, h2.Close())
}

// TestProcessOperatorStateRescale follows Flink's
// AbstractStreamOperatorTestHarness.repartitionOperatorState use in its
// rescaling tests: the buffers of BufferingSink at parallelism 2 are dealt
// out over 3 and gathered on 1 subtask, by Flink's round-robin split.
func TestProcessOperatorStateRescale(t *testing.T) {
	var restored bool
	build := func(in stream.DataStream[int]) stream.DataStream[string] {
		return stream.Process(in, buffering(100, &restored))
	}
	var snaps [][]byte
	for i, vs := range [][]int{{1, 2, 3, 4, 5}, {6, 7, 8}} {
		h, err := New(Options{Parallelism: 2, Subtask: i}, build)
		must(t, err)
		for _, v := range vs {
			must(t, h.ProcessElement(v, 0))
		}
		snap, err := h.Snapshot()
		must(t, err)
		snaps = append(snaps, snap)
		must(t, h.Close())
	}
	want := map[int][][]int{
		3: {{1, 2, 3}, {4, 5, 6}, {7, 8}},
		1: {{1, 2, 3, 4, 5, 6, 7, 8}},
		2: {{1, 2, 3, 4, 5}, {6, 7, 8}},
	}
	// Repackage deals operator state out as Repartition does: both restore
	// through Flink's rules
	repackaged, err := Repackage(snaps...)
	must(t, err)
	for p, bufs := range want {
		parts, err := Repartition(snaps, p)
		must(t, err)
		for i := range p {
			for via, snap := range map[string][]byte{"Repartition": parts[i], "Repackage": repackaged} {
				// a threshold of the buffer's size plus one: the first element
				// after the restore emits the restored buffer with it
				h, err := New(Options{Parallelism: p, Subtask: i}, func(in stream.DataStream[int]) stream.DataStream[string] {
					return stream.Process(in, buffering(len(bufs[i])+1, &restored))
				})
				must(t, err)
				must(t, h.Restore(snap))
				must(t, h.ProcessElement(0, 0))
				got := h.Records()
				if w := fmt.Sprint(append(slices.Clone(bufs[i]), 0)); len(got) != 1 || got[0].Value != w {
					t.Errorf("%s: parallelism %d subtask %d: %v, want %s", via, p, i, got, w)
				}
				must(t, h.Close())
			}
		}
	}
}

// TestRepartitionKeyed: keyed state comes from one old subtask and goes
// whole to every new one (each keeps its key groups); two old subtasks with
// keyed state are refused.
func TestRepartitionKeyed(t *testing.T) {
	h, err := Keyed(Options{}, identity, counting)
	must(t, err)
	for _, v := range []int{1, 2, 3, 1} {
		must(t, h.ProcessElement(v, 3))
	}
	snap, err := h.Snapshot()
	must(t, err)
	must(t, h.Close())
	parts, err := Repartition([][]byte{snap}, 2)
	must(t, err)
	var got []int
	for i, p := range parts {
		hs, err := Keyed(Options{Parallelism: 2, Subtask: i, MaxParallelism: 128}, identity, counting)
		must(t, err)
		must(t, hs.Restore(p))
		must(t, hs.ProcessWatermark(10))
		for _, r := range hs.Records() {
			got = append(got, r.Value)
		}
		must(t, hs.Close())
	}
	slices.Sort(got)
	if want := []int{102, 201, 301}; !slices.Equal(got, want) {
		t.Errorf("restored at parallelism 2: %v, want %v", got, want)
	}
	if _, err := Repartition([][]byte{snap, snap}, 2); err == nil {
		t.Error("keyed state of two old subtasks repartitioned")
	}
}
