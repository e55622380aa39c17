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
