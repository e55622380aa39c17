package source

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weirdata/weir/clock"
)

// fakeClock is a clock whose timers move its time forward to theirs and
// fire at once.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Timer(at time.Time) clock.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if at.After(c.now) {
		c.now = at
	}
	return firedAt(c.now)
}

// firedTimer is a timer that fired when it was made.
type firedTimer struct{ ch chan time.Time }

func firedAt(t time.Time) firedTimer {
	ch := make(chan time.Time, 1)
	ch <- t
	return firedTimer{ch}
}

func (t firedTimer) C() <-chan time.Time { return t.ch }
func (t firedTimer) Stop() bool          { return false }

// newReaders creates an enumerator and parallelism readers of src.
func newReaders[T any](t testing.TB, src Source[T], parallelism int, restored *EnumeratorState) (Enumerator, []Reader[T]) {
	t.Helper()
	en, err := src.Enumerator(parallelism, restored)
	if err != nil {
		t.Fatal(err)
	}
	rs := make([]Reader[T], parallelism)
	for i := range rs {
		if rs[i], err = src.Reader(ReaderContext{Subtask: i, Parallelism: parallelism, Splits: en}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rs[i].Close() })
	}
	return en, rs
}

// result is what readers handed out: records per split in order, and the
// splits whose End came, in order.
type result[T any] struct {
	bySplit map[string][]T
	ended   []string
	all     []T // in the order Next returned them
}

// drain calls Next on each reader in turn until every one returns io.EOF,
// checking that every batch's First continues its split's records and that
// each split ends once, after its records.
func drain[T any](t testing.TB, rs []Reader[T]) result[T] {
	t.Helper()
	res := result[T]{bySplit: map[string][]T{}}
	drainInto(t, rs, &res)
	return res
}

// drainInto is drain adding to what res holds.
func drainInto[T any](t testing.TB, rs []Reader[T], res *result[T]) {
	t.Helper()
	done := make([]bool, len(rs))
	ctx := context.Background()
	for left := len(rs); left > 0; {
		for i, r := range rs {
			if done[i] {
				continue
			}
			b, err := r.Next(ctx)
			if err == io.EOF {
				done[i] = true
				left--
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			res.check(t, b)
		}
	}
}

func (res *result[T]) check(t testing.TB, b Batch[T]) {
	t.Helper()
	if slices.Contains(res.ended, b.Split) {
		t.Fatalf("split %s: batch after its end", b.Split)
	}
	if got := int64(len(res.bySplit[b.Split])); b.First != got {
		t.Fatalf("split %s: batch First = %d, want %d", b.Split, b.First, got)
	}
	if b.End {
		if len(b.Records) != 0 {
			t.Fatalf("split %s: End batch with %d records", b.Split, len(b.Records))
		}
		res.ended = append(res.ended, b.Split)
		return
	}
	if len(b.Records) == 0 {
		t.Fatalf("split %s: empty batch", b.Split)
	}
	res.bySplit[b.Split] = append(res.bySplit[b.Split], b.Records...)
	res.all = append(res.all, b.Records...)
}

// readWhole reads src with parallelism readers.
func readWhole[T any](t testing.TB, src Source[T], parallelism int) result[T] {
	t.Helper()
	_, rs := newReaders(t, src, parallelism, nil)
	return drain(t, rs)
}

// readRecords calls Next until n records came (End batches included in
// the check), and returns them.
func readRecords[T any](t testing.TB, r Reader[T], res *result[T], n int) {
	t.Helper()
	for got := 0; got < n; {
		b, err := r.Next(context.Background())
		if err != nil {
			t.Fatalf("after %d of %d records: %v", got, n, err)
		}
		res.check(t, b)
		got += len(b.Records)
	}
}

// checkResumeEvery reads src (built with BatchSize(1)) with one reader,
// stops after k records for every k, snapshots the reader's positions and
// the enumerator, restores a new enumerator and reader from them and reads
// the rest: the records before and after the stop, concatenated, must be
// want. The positions go through MarshalBinary on the way.
func checkResumeEvery[T comparable](t *testing.T, src Source[T], want []T) {
	t.Helper()
	for k := 0; k <= len(want); k++ {
		en, rs := newReaders(t, src, 1, nil)
		res := result[T]{bySplit: map[string][]T{}}
		readRecords(t, rs[0], &res, k)
		pos := roundTrip(t, rs[0].Positions())
		st := en.Snapshot()
		if err := rs[0].Close(); err != nil {
			t.Fatal(err)
		}
		_, rs2 := newReaders(t, src, 1, &st)
		rs2[0].AddSplits(pos)
		drainInto(t, rs2, &res)
		got := res.all
		if !slices.Equal(got, want) {
			t.Fatalf("stop after %d records and resume at %v: got %d records %v, want %d %v", k, pos, len(got), head(got), len(want), head(want))
		}
	}
}

func roundTrip(t testing.TB, splits []Split) []Split {
	t.Helper()
	out := make([]Split, len(splits))
	for i, s := range splits {
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if err := out[i].UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func head[T any](s []T) []T { return s[:min(len(s), 20)] }

func writeFile(t testing.TB, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func appendFile(t testing.TB, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

// nextRecords calls Next until n records came or ctx ends.
func nextRecords[T any](ctx context.Context, r Reader[T], n int) ([]T, error) {
	var out []T
	for len(out) < n {
		b, err := r.Next(ctx)
		if err != nil {
			return out, err
		}
		out = append(out, b.Records...)
	}
	return out, nil
}
