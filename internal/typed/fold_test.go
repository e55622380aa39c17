package typed

import (
	"context"
	"testing"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/sortjoin"
)

// discard is a collector that keeps nothing.
type discard[T any] struct{ n int }

func (d *discard[T]) collect(b []T) error { d.n += len(b); return nil }

// resettableIter iterates recs again after each reset, allocating nothing.
type resettableIter struct {
	recs []sortjoin.Record
	i    int
}

func (r *resettableIter) Next() ([]byte, []byte, bool) {
	if r.i >= len(r.recs) {
		return nil, nil, false
	}
	r.i++
	return r.recs[r.i-1].Key, r.recs[r.i-1].Val, true
}
func (r *resettableIter) Err() error   { return nil }
func (r *resettableIter) Close() error { return nil }

// TestFolderWalkAllocs checks that folding flat records allocates
// nothing per record, streamed or from a sorter's output.
func TestFolderWalkAllocs(t *testing.T) {
	type pair struct{ K, V int64 }
	codec, err := memory.NewCodec[pair]()
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewKeyer[pair, int64](func(p pair) int64 { return p.K })
	if err != nil {
		t.Fatal(err)
	}
	sum := func(a, b pair) pair { a.V += b.V; return a }
	const n = 4096
	ctx := context.Background()

	out := &discard[pair]{}
	f := NewFolder(codec, sum, out.collect, 64)
	batch := make([]pair, n)
	next := int64(0) // keys keep ascending from run to run
	allocs := testing.AllocsPerRun(20, func() {
		for i := range batch {
			batch[i] = pair{next + int64(i/4), 1}
		}
		next += n / 4
		if err := f.AddBatch(ctx, k.Appender(), batch); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("streaming %d flat records: %v allocations", n, allocs)
	}
	if err := f.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	if runs := int(next / (n / 4)); out.n != runs*n/4 {
		t.Errorf("%d groups emitted, want %d", out.n, runs*n/4)
	}

	out = &discard[pair]{}
	f = NewFolder(codec, sum, out.collect, 64)
	it := &resettableIter{recs: make([]sortjoin.Record, n)}
	for i := range it.recs {
		it.recs[i] = sortjoin.Record{Key: make([]byte, 0, 8), Val: make([]byte, 0, 16)}
	}
	next = 0
	p := new(pair) // encoded from, outside the walk
	allocs = testing.AllocsPerRun(20, func() {
		for i := range it.recs {
			*p = pair{next + int64(i/4), 1}
			it.recs[i].Key = k.Append(it.recs[i].Key[:0], p)
			it.recs[i].Val = codec.Append(it.recs[i].Val[:0], p)
		}
		next += n / 4
		it.i = 0
		if err := f.FoldSorted(ctx, it, codec); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 { // the scratch record, once per walk
		t.Errorf("folding %d sorted flat records: %v allocations", n, allocs)
	}
}
