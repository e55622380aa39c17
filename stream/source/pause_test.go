package source

import (
	"context"
	"errors"
	"io"
	"math"
	"slices"
	"sync/atomic"
	"testing"
)

// noMoreSplits is an enumerator with nothing to assign.
type noMoreSplits struct{}

func (noMoreSplits) Request(int) (Grant, error) { return Grant{Status: NoMore}, nil }

// heldReader returns a reader of src holding splits, added as a restore
// adds them.
func heldReader[T any](t *testing.T, src Source[T], splits []Split) Reader[T] {
	t.Helper()
	r, err := src.Reader(ReaderContext{Parallelism: 1, Splits: noMoreSplits{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	r.AddSplits(splits)
	return r
}

func pauser[T any](t *testing.T, r Reader[T]) SplitPauser {
	t.Helper()
	p, ok := r.(SplitPauser)
	if !ok {
		t.Fatalf("reader %T is no SplitPauser", r)
	}
	return p
}

// nextSplits calls Next n times and returns the split of each batch.
func nextSplits[T any](t *testing.T, r Reader[T], n int) []string {
	t.Helper()
	var ids []string
	for range n {
		b, err := r.Next(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, b.Split)
	}
	return ids
}

// TestPauseOrResumeSplitsUnbounded follows Flink's
// SourceReaderBase.pauseOrResumeSplits (FLIP-217) on a reader that takes
// turns between two splits: a paused split hands out nothing while the
// other goes on, keeps its position, and continues from it once resumed.
func TestPauseOrResumeSplitsUnbounded(t *testing.T) {
	src := Generator(func(i int64) int64 { return i }, 0, 0, BatchSize(2))
	splits := indexSplits("generator", 0, math.MaxInt64, 2)
	r := heldReader(t, src, splits)
	p := pauser(t, r)
	a, b := splits[0].ID, splits[1].ID
	if got := nextSplits(t, r, 4); !slices.Equal(got, []string{a, b, a, b}) {
		t.Fatalf("batches of %v, want the splits in turn", got)
	}
	p.PauseOrResumeSplits([]string{a}, nil)
	if got := nextSplits(t, r, 3); !slices.Equal(got, []string{b, b, b}) {
		t.Fatalf("with %s paused: batches of %v", a, got)
	}
	pos := r.Positions()
	if len(pos) != 2 || pos[0].ID != a || pos[0].Records != 4 || pos[1].Records != 10 {
		t.Fatalf("positions %v, want %s at record 4 and %s at 10", pos, a, b)
	}
	p.PauseOrResumeSplits(nil, []string{a, "unknown"})
	var first []int64
	for range 2 {
		bt, err := r.Next(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if bt.Split == a {
			if bt.First != 4 {
				t.Fatalf("resumed %s at record %d, want 4", a, bt.First)
			}
			first = append(first, bt.Records...)
		}
	}
	if !slices.Equal(first, []int64{splits[0].Offset + 4, splits[0].Offset + 5}) {
		t.Fatalf("resumed %s with %v", a, first)
	}
}

// probeCtx counts the reader's looks at it: a reader that spins calls Err
// over and over; one that waits calls Done and blocks on it. The test
// cancels it once the reader waits.
type probeCtx struct {
	context.Context
	cancel  context.CancelFunc
	errs    atomic.Int64
	waiting chan struct{}
	once    atomic.Bool
}

func newProbe(parent context.Context) *probeCtx {
	ctx, cancel := context.WithCancel(parent)
	return &probeCtx{Context: ctx, cancel: cancel, waiting: make(chan struct{})}
}

func (c *probeCtx) Err() error {
	if c.errs.Add(1) > 1000 {
		c.cancel() // a spinning reader: end it, the test fails
	}
	return c.Context.Err()
}

func (c *probeCtx) Done() <-chan struct{} {
	if c.once.CompareAndSwap(false, true) {
		close(c.waiting)
	}
	return c.Context.Done()
}

// TestAllSplitsPausedWaits: a reader whose every split is paused waits on
// its context, without spinning and without handing out a batch; Next
// called again after a resume reads on.
func TestAllSplitsPausedWaits(t *testing.T) {
	src := Generator(func(i int64) int64 { return i }, 0, 0, BatchSize(2))
	splits := indexSplits("generator", 0, math.MaxInt64, 2)
	r := heldReader(t, src, splits)
	pauser(t, r).PauseOrResumeSplits([]string{splits[0].ID, splits[1].ID}, nil)
	ctx := newProbe(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := r.Next(ctx)
		done <- err
	}()
	var err error
	select {
	case <-ctx.waiting:
		ctx.cancel()
		err = <-done
	case err = <-done: // the reader gave up spinning, or returned a batch
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Next returned %v, want the context's error", err)
	}
	if n := ctx.errs.Load(); n > 10 {
		t.Fatalf("the reader looked at its context %d times: it spins", n)
	}
	pauser(t, r).PauseOrResumeSplits(nil, []string{splits[1].ID})
	if got := nextSplits(t, r, 2); !slices.Equal(got, []string{splits[1].ID, splits[1].ID}) {
		t.Fatalf("after resuming %s: batches of %v", splits[1].ID, got)
	}
}

// TestPauseBoundedReader: a bounded source's reader reads its splits one
// after another; when the one it reads is paused it opens the next, and
// the paused one, resumed, is read to its end. A pause asked before the
// reader holds the split holds when it gets it, and a finished split is
// forgotten.
func TestPauseBoundedReader(t *testing.T) {
	items := make([]int, 12)
	for i := range items {
		items[i] = i
	}
	src := FromSlice(items, BatchSize(2))
	splits := indexSplits("slice", 0, uint64(len(items)), 3)
	r := heldReader(t, src, splits[:2])
	p := pauser(t, r)
	p.PauseOrResumeSplits([]string{splits[2].ID}, nil) // not held yet
	if got := nextSplits(t, r, 1); got[0] != splits[0].ID {
		t.Fatalf("first batch of %s, want %s", got[0], splits[0].ID)
	}
	p.PauseOrResumeSplits([]string{splits[0].ID}, nil)
	var order []int
	var ended []string
	read := func() error {
		b, err := r.Next(t.Context())
		if err != nil {
			return err
		}
		if b.End {
			ended = append(ended, b.Split)
		}
		order = append(order, b.Records...)
		return nil
	}
	for range 3 { // split 1: two batches and its end
		if err := read(); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(order, []int{4, 5, 6, 7}) || !slices.Equal(ended, []string{splits[1].ID}) {
		t.Fatalf("with %s paused read %v, ended %v", splits[0].ID, order, ended)
	}
	r.AddSplits(splits[2:])
	p.PauseOrResumeSplits(nil, []string{splits[0].ID})
	for {
		if err := read(); err == io.EOF {
			t.Fatal("the reader ended with a paused split")
		} else if err != nil {
			t.Fatal(err)
		}
		if len(ended) == 2 {
			break
		}
	}
	if !slices.Equal(order, []int{4, 5, 6, 7, 2, 3}) || ended[1] != splits[0].ID {
		t.Fatalf("after resuming read %v, ended %v", order, ended)
	}
	// split 2 is paused from before it came: the reader waits
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := r.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next with only a paused split returned %v", err)
	}
	p.PauseOrResumeSplits(nil, []string{splits[2].ID})
	for {
		if err := read(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(order, []int{4, 5, 6, 7, 2, 3, 8, 9, 10, 11}) {
		t.Fatalf("read %v", order)
	}
}
