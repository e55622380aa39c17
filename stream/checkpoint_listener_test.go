package stream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/watermark"
)

// TestCheckpointListener: in a job whose checkpoint 2 fails to store (one
// failure tolerated), every subtask of a ProcessFunction and of a
// KeyedProcessFunction hears that checkpoints 1 and 3 completed and 2 was
// aborted, in that order (Flink's CheckpointListener); the two-phase sink
// commits checkpoint 2's transactions with checkpoint 3 and its writers
// hear of the abort too.
func TestCheckpointListener(t *testing.T) {
	const p = 2
	s := newTxnStore()
	src := newGated(ints(100))
	env := New(Options{Parallelism: p, Clock: manual(), Restart: NoRestart()})
	cfg := env.EnableCheckpointing(time.Hour)
	cfg.Storage = &failStore{Memory: checkpoint.NewMemory(1), id: 2, err: errors.New("disk full")}
	cfg.TolerableFailures = 1
	var mu sync.Mutex
	heard := map[string][]string{} // function instance -> notifications
	var builds atomic.Int32
	listen := func(kind string) (func(int64) error, func(int64) error) {
		name := fmt.Sprint(kind, builds.Add(1))
		note := func(what string) func(int64) error {
			return func(id int64) error {
				mu.Lock()
				heard[name] = append(heard[name], fmt.Sprint(what, " ", id))
				mu.Unlock()
				return nil
			}
		}
		return note("complete"), note("aborted")
	}
	var seen atomic.Int64
	ds := FromSource(env, src, watermark.NoWatermarks[int](), "numbers")
	ds = Process(ds, func() ProcessFunction[int, int] {
		complete, aborted := listen("process")
		return ProcessFunction[int, int]{
			ProcessElement: func(v int, _ *Context, out Collector[int]) error {
				seen.Add(1)
				out.Collect(v)
				return nil
			},
			NotifyCheckpointComplete: complete, NotifyCheckpointAborted: aborted}
	})
	lines := KeyedProcess(KeyBy(ds, func(v int) int { return v % 7 }), func() KeyedProcessFunction[int, int, string] {
		complete, aborted := listen("keyed")
		return KeyedProcessFunction[int, int, string]{
			ProcessElement: func(v int, _ *KeyedContext[int], out Collector[string]) error {
				out.Collect(fmt.Sprint(v))
				return nil
			},
			NotifyCheckpointComplete: complete, NotifyCheckpointAborted: aborted}
	})
	SinkTo(lines, txnSink{s})
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for k, wantErr := range []bool{false, true, false} {
		src.release(10)
		waitUntil(t, "the records before a checkpoint", func() bool { return seen.Load() == int64(10*(k+1)) })
		if _, err := j.TriggerCheckpoint(context.Background()); (err != nil) != wantErr {
			t.Fatalf("checkpoint %d: %v", k+1, err)
		}
	}
	want := []string{"complete 1", "aborted 2", "complete 3"}
	waitUntil(t, "the notifications", func() bool {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, h := range heard {
			if len(h) >= len(want) {
				n++
			}
		}
		return n == 2*p
	})
	mu.Lock()
	if len(heard) != 2*p {
		t.Errorf("%d function instances heard, want %d", len(heard), 2*p)
	}
	for name, h := range heard {
		if !slices.Equal(h, want) {
			t.Errorf("%s heard %q, want %q", name, h, want)
		}
	}
	mu.Unlock()
	// the sink's writers hear the notifications on their own subtasks,
	// after the functions upstream may have
	var writerNotes []string
	waitUntil(t, "the sink writers' notifications", func() bool {
		for _, e := range s.takeEvents() {
			if len(e) > 8 && (e[:8] == "complete" || e[:7] == "aborted") {
				writerNotes = append(writerNotes, e)
			}
		}
		return len(writerNotes) >= 3*p && len(s.committedRecords()) >= 30
	})
	if got := s.committedRecords(); len(got) != 30 {
		t.Errorf("committed %d records by checkpoint 3, want 30", len(got))
	}
	slices.Sort(writerNotes)
	if wantNotes := []string{"aborted 0 2", "aborted 1 2", "complete 0 1", "complete 0 3", "complete 1 1", "complete 1 3"}; !slices.Equal(writerNotes, wantNotes) {
		t.Errorf("the sink's writers heard %q, want %q", writerNotes, wantNotes)
	}
	src.open()
	if _, err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := s.committedRecords(); len(got) != 100 {
		t.Fatalf("committed %d records at the end, want 100", len(got))
	}
}
