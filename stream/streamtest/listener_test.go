package streamtest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/weirdata/weir/stream"
)

// notes returns the two notification functions of a CheckpointListener
// that append to *heard.
func notes(heard *[]string) (func(int64) error, func(int64) error) {
	return func(id int64) error { *heard = append(*heard, fmt.Sprint("complete ", id)); return nil },
		func(id int64) error { *heard = append(*heard, fmt.Sprint("aborted ", id)); return nil }
}

// TestCheckpointListenerHarness: the harness's notifications reach the
// CheckpointListener of a ProcessFunction, a CoProcessFunction, a
// KeyedProcessFunction and a KeyedCoProcessFunction in the order given;
// a function's error fails the notification, naming the operator.
func TestCheckpointListenerHarness(t *testing.T) {
	type notifier interface {
		Snapshot() ([]byte, error)
		NotifyCheckpointComplete(int64) error
		NotifyCheckpointAborted(int64) error
		Close() error
	}
	var heard []string
	c, a := notes(&heard)
	h1, err := New(Options{}, func(in stream.DataStream[int]) stream.DataStream[int] {
		return stream.Process(in, func() stream.ProcessFunction[int, int] {
			return stream.ProcessFunction[int, int]{ProcessElement: func(v int, _ *stream.Context, out stream.Collector[int]) error {
				out.Collect(v)
				return nil
			}, NotifyCheckpointComplete: c, NotifyCheckpointAborted: a}
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	h2, err := New2(Options{}, func(x stream.DataStream[int], y stream.DataStream[string]) stream.DataStream[int] {
		return stream.CoProcess(stream.Connect(x, y), func() stream.CoProcessFunction[int, string, int] {
			return stream.CoProcessFunction[int, string, int]{
				ProcessElement1:          func(int, *stream.Context, stream.Collector[int]) error { return nil },
				ProcessElement2:          func(string, *stream.Context, stream.Collector[int]) error { return nil },
				NotifyCheckpointComplete: c, NotifyCheckpointAborted: a}
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	h3, err := Keyed(Options{}, func(v int) int { return v }, func() stream.KeyedProcessFunction[int, int, int] {
		return stream.KeyedProcessFunction[int, int, int]{
			ProcessElement:           func(int, *stream.KeyedContext[int], stream.Collector[int]) error { return nil },
			NotifyCheckpointComplete: c, NotifyCheckpointAborted: a}
	})
	if err != nil {
		t.Fatal(err)
	}
	h4, err := New2(Options{}, func(x stream.DataStream[int], y stream.DataStream[int]) stream.DataStream[int] {
		ks := stream.ConnectKeyed(stream.KeyBy(x, func(v int) int { return v }), stream.KeyBy(y, func(v int) int { return v }))
		return stream.KeyedCoProcess(ks, func() stream.KeyedCoProcessFunction[int, int, int, int] {
			return stream.KeyedCoProcessFunction[int, int, int, int]{
				ProcessElement1:          func(int, *stream.KeyedContext[int], stream.Collector[int]) error { return nil },
				ProcessElement2:          func(int, *stream.KeyedContext[int], stream.Collector[int]) error { return nil },
				NotifyCheckpointComplete: c, NotifyCheckpointAborted: a}
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range []notifier{h1, h2, h3, h4} {
		heard = nil
		for range 3 {
			if _, err := h.Snapshot(); err != nil {
				t.Fatal(err)
			}
		}
		if err := h.NotifyCheckpointAborted(2); err != nil {
			t.Fatal(err)
		}
		if err := h.NotifyCheckpointComplete(3); err != nil {
			t.Fatal(err)
		}
		if err := h.NotifyCheckpointComplete(1); err != nil {
			t.Fatal(err)
		}
		if want := []string{"aborted 2", "complete 3", "complete 1"}; !slices.Equal(heard, want) {
			t.Errorf("function %d heard %q, want %q", i+1, heard, want)
		}
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
	}

	h5, err := New(Options{}, func(in stream.DataStream[int]) stream.DataStream[int] {
		return stream.Process(in, func() stream.ProcessFunction[int, int] {
			return stream.ProcessFunction[int, int]{
				ProcessElement:           func(int, *stream.Context, stream.Collector[int]) error { return nil },
				NotifyCheckpointComplete: func(id int64) error { return fmt.Errorf("refused %d", id) }}
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	defer h5.Close()
	if err := h5.NotifyCheckpointComplete(4); err == nil || err.Error() != "stream: Process: checkpoint 4: refused 4" {
		t.Fatalf("a failing listener: %v", err)
	}
	if err := h5.NotifyCheckpointAborted(5); err != nil {
		t.Fatalf("no abort listener: %v", err)
	}
}
