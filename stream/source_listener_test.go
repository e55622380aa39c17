package stream

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

// listening is a source whose readers are source.CheckpointListeners
// that record what they hear.
type listening struct {
	*gated[int]
	mu       sync.Mutex
	taken    map[int64][]source.Split
	complete []int64
}

func (l *listening) Reader(rc source.ReaderContext) (source.Reader[int], error) {
	r, err := l.gated.Reader(rc)
	return &listeningReader{Reader: r, l: l}, err
}

type listeningReader struct {
	source.Reader[int]
	l *listening
}

func (r *listeningReader) Checkpointed(id int64, positions []source.Split) {
	r.l.mu.Lock()
	r.l.taken[id] = append(r.l.taken[id], positions...)
	r.l.mu.Unlock()
}

func (r *listeningReader) NotifyCheckpointComplete(id int64) error {
	r.l.mu.Lock()
	r.l.complete = append(r.l.complete, id)
	r.l.mu.Unlock()
	return nil
}

// TestSourceReaderHearsCheckpoints: a reader that is a
// source.CheckpointListener is told the positions each checkpoint took
// from it, with the checkpoint's id, and the checkpoint's completion.
func TestSourceReaderHearsCheckpoints(t *testing.T) {
	l := &listening{gated: newGated(ints(10)), taken: map[int64][]source.Split{}}
	env := New(Options{Parallelism: 1, Clock: manual()})
	env.EnableCheckpointing(time.Hour)
	Collect(FromSource(env, l, watermark.NoWatermarks[int](), "numbers"))
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	l.release(4)
	waitUntil(t, "4 records read", func() bool { return sourceOut(j) >= 4 })
	id, err := j.TriggerCheckpoint(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the completion heard", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return slices.Contains(l.complete, id)
	})
	l.open()
	if _, err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	pos := l.taken[id]
	if len(pos) != 1 || pos[0].Records != 4 {
		t.Fatalf("checkpoint %d took %v, want the slice's split after 4 records", id, pos)
	}
}
