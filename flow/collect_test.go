package flow

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
)

// sliceCollector keeps copies of what it collects and counts its ends; it
// fails the collect after failAt records when failAt > 0.
type sliceCollector struct {
	Plain
	got    []int
	ends   int
	failAt int
	sizes  []int
}

var errCollect = errors.New("collect failed")

func (s *sliceCollector) Collect(b []int) error {
	if s.failAt > 0 && len(s.got)+len(b) > s.failAt {
		return errCollect
	}
	s.got = append(s.got, b...)
	s.sizes = append(s.sizes, len(b))
	return nil
}

func (s *sliceCollector) End() error { s.ends++; return nil }

func ints(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// TestEmitter: emitted values arrive in order, in batches of Batch and a
// last partial one, and End ends the next collector once. After a failed
// collect the error sticks and later values are dropped.
func TestEmitter(t *testing.T) {
	for _, n := range []int{0, 1, 9, 10, 11, 95} {
		next := &sliceCollector{}
		e := &Emitter[int]{Next: next, Batch: 10}
		for _, v := range ints(n) {
			e.Emit(v)
		}
		if err := e.End(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(next.got, ints(n)) && n > 0 {
			t.Fatalf("n=%d: got %v", n, next.got)
		}
		for i, s := range next.sizes {
			if s != 10 && i != len(next.sizes)-1 || s > 10 {
				t.Fatalf("n=%d: batch sizes %v", n, next.sizes)
			}
		}
		if want := (n + 9) / 10; len(next.sizes) != want || next.ends != 1 {
			t.Fatalf("n=%d: %d batches and %d ends, want %d and 1", n, len(next.sizes), next.ends, want)
		}
	}
	next := &sliceCollector{failAt: 15}
	e := &Emitter[int]{Next: next, Batch: 10}
	for _, v := range ints(50) {
		e.Emit(v)
	}
	if err := e.End(); !errors.Is(err, errCollect) || next.ends != 0 || len(next.got) != 10 {
		t.Fatalf("End = %v with %d records and %d ends, want the collect error, 10 and 0", err, len(next.got), next.ends)
	}
}

// TestFanout: every collector gets every batch; End ends them all; a
// failing collector's error is returned.
func TestFanout(t *testing.T) {
	a, b := &sliceCollector{}, &sliceCollector{}
	f := &Fanout[int]{Outs: []Collector[int]{a, b}}
	for _, batch := range [][]int{{1, 2}, {3}, {}} {
		if err := f.Collect(batch); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.End(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*sliceCollector{a, b} {
		if !slices.Equal(c.got, []int{1, 2, 3}) || c.ends != 1 {
			t.Fatalf("got %v with %d ends", c.got, c.ends)
		}
	}
	bad := &Fanout[int]{Outs: []Collector[int]{&sliceCollector{}, &sliceCollector{failAt: 1}}}
	if err := bad.Collect([]int{1, 2}); !errors.Is(err, errCollect) {
		t.Fatalf("Collect = %v, want the collect error", err)
	}
}

// rawProbe is a collector with a raw sink.
type rawProbe struct {
	sliceCollector
	written int64
}

func (r *rawProbe) Raw() RawSink                  { return r }
func (r *rawProbe) Write(b []byte) error          { return nil }
func (r *rawProbe) Written(n int64)               { r.written += n }
func (r *rawProbe) Collect(b []int) error         { return r.sliceCollector.Collect(b) }
func (r *rawProbe) End() error                    { return r.sliceCollector.End() }
func (r *rawProbe) collected() (got []int, n int) { return r.got, r.ends }

// TestCounting: rows collected and rows a raw sink reports both count, and
// the wrapped collector sees everything.
func TestCounting(t *testing.T) {
	var rows atomic.Int64
	inner := &rawProbe{}
	c := &Counting[int]{Collector: inner, Rows: &rows}
	_ = c.Collect([]int{1, 2, 3})
	_ = c.Collect([]int{4})
	c.Raw().Written(5)
	if err := c.End(); err != nil {
		t.Fatal(err)
	}
	got, ends := inner.collected()
	if rows.Load() != 9 || inner.written != 5 || !slices.Equal(got, []int{1, 2, 3, 4}) || ends != 1 {
		t.Fatalf("rows %d, written %d, got %v, ends %d", rows.Load(), inner.written, got, ends)
	}
	plain := &Counting[int]{Collector: &sliceCollector{}, Rows: &rows}
	if plain.Raw() != nil {
		t.Fatal("a collector without a raw sink gained one")
	}
}

// mergeJob runs k sources of n records each (source i emits i*n..i*n+n-1)
// into one task that merges them into c.
func mergeJob(t *testing.T, k, n int, c Collector[int]) error {
	t.Helper()
	env := newTestEnv(t, budgets[0].opts)
	defer env.check(t)
	g := NewGraph()
	dst := g.Vertex("merge", 1, func(tc *TaskContext) error { return Merge[int](tc, k, c) })
	for i := 0; i < k; i++ {
		src := g.Vertex("src", 1, func(tc *TaskContext) error {
			w := Output[int](tc, 0)
			b := make([]int, 0, 7)
			for j := 0; j < n; j++ {
				b = append(b, i*n+j)
				if len(b) == cap(b) || j == n-1 {
					if err := w.EmitBatch(b); err != nil {
						return err
					}
					b = b[:0]
				}
			}
			return nil
		})
		Connect(g, src, dst, Partitioner[int]{Strategy: Forward}, Pipelined, nil)
	}
	_, err := Execute(context.Background(), g, env.options(Options{}))
	return err
}

// TestMerge: every record of every input arrives once, and the collector is
// ended once; a failing collector fails the job without a leak.
func TestMerge(t *testing.T) {
	for _, k := range []int{1, 2, 5} {
		for _, n := range []int{0, 1, 1000} {
			c := &sliceCollector{}
			if err := mergeJob(t, k, n, c); err != nil {
				t.Fatal(err)
			}
			got := slices.Clone(c.got)
			slices.Sort(got)
			if !slices.Equal(got, ints(k*n)) && k*n > 0 || len(got) != k*n || c.ends != 1 {
				t.Fatalf("k=%d n=%d: %d records, %d ends", k, n, len(got), c.ends)
			}
		}
	}
	c := &sliceCollector{failAt: 500}
	if err := mergeJob(t, 3, 1000, c); !errors.Is(err, errCollect) {
		t.Fatalf("Execute = %v, want the collect error", err)
	}
	if c.ends != 0 {
		t.Fatal("a failed merge ended its collector")
	}
}
