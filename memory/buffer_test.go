package memory

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// kv is the oracle's copy of a record.
type kv struct{ key, val []byte }

// budgets are the memory settings every RecordBuffer test runs under: unlimited,
// and tiny budgets that force ErrBudgetExceeded.
var budgets = []Options{
	{SegmentSize: 4096},
	{SegmentSize: 4096, Budget: 4 * 4096},
	{SegmentSize: 8192, Budget: 3 * 8192},
	{},
}

// randomRecords draws records whose sizes are Zipf-skewed, with some larger than
// a 4 KiB segment and some empty.
func randomRecords(seed uint64, n int) []kv {
	r := rand.New(rand.NewPCG(seed, 7))
	z := rand.NewZipf(r, 1.3, 2, 3000)
	out := make([]kv, n)
	for i := range out {
		k := make([]byte, r.IntN(24))
		v := make([]byte, int(z.Uint64()))
		if r.IntN(40) == 0 {
			v = make([]byte, 4096+r.IntN(20000)) // larger than a segment
		}
		for j := range k {
			k[j] = byte(r.Uint32())
		}
		for j := range v {
			v[j] = byte(i + j)
		}
		out[i] = kv{k, v}
	}
	return out
}

// fill appends recs to b until the budget runs out, checking every record so far
// whenever it does, and returns how many records it appended in total.
func fillAndCheck(t *testing.T, b *RecordBuffer, recs []kv) int {
	t.Helper()
	var held []kv
	var offs []uint64
	check := func() {
		t.Helper()
		var scratch []byte
		for i, off := range offs {
			var k, v []byte
			k, v, scratch = b.Get(off, scratch)
			if !bytes.Equal(k, held[i].key) || !bytes.Equal(v, held[i].val) {
				t.Fatalf("record %d of %d: got %d/%d bytes, want %d/%d", i, len(offs), len(k), len(v), len(held[i].key), len(held[i].val))
			}
			if kk, _ := b.Key(off, nil); !bytes.Equal(kk, held[i].key) {
				t.Fatalf("Key of record %d differs", i)
			}
		}
		if b.Len() != len(offs) {
			t.Fatalf("Len = %d, want %d", b.Len(), len(offs))
		}
		var size int64
		for _, r := range held {
			size += int64(RecordSize(len(r.key), len(r.val)))
		}
		if b.Bytes() != size {
			t.Fatalf("Bytes = %d, want %d", b.Bytes(), size)
		}
	}
	for i := 0; i < len(recs); {
		off, err := b.Append(recs[i].key, recs[i].val)
		if errors.Is(err, ErrBudgetExceeded) {
			if len(offs) == 0 {
				// Nothing to spill: the record alone exceeds the budget.
				off = b.AppendForce(recs[i].key, recs[i].val)
			} else {
				check() // a failed Append left the buffer as it was
				b.Reset()
				held, offs = held[:0], offs[:0]
				continue
			}
		} else if err != nil {
			t.Fatal(err)
		}
		held = append(held, recs[i])
		offs = append(offs, off)
		i++
	}
	check()
	return len(recs)
}

func TestRecordBufferAppendGet(t *testing.T) {
	recs := randomRecords(1, 600)
	for _, opts := range budgets {
		t.Run(fmt.Sprintf("seg%d-budget%d", opts.SegmentSize, opts.Budget), func(t *testing.T) {
			m := MustNewManager(opts)
			res := m.NewReservation("buffer")
			b := NewRecordBuffer(res)
			fillAndCheck(t, b, recs)
			b.Free()
			if res.Segments() != 0 || res.Bytes() != 0 || b.Segments() != 0 {
				t.Errorf("after Free: reservation holds %d segments, %d bytes", res.Segments(), res.Bytes())
			}
			if err := res.Release(); err != nil {
				t.Fatal(err)
			}
			closeManager(t, m)
		})
	}
}

func TestRecordBufferEmptyAndEqual(t *testing.T) {
	m := MustNewManager(Options{SegmentSize: 4096, Budget: 4 * 4096})
	res := m.NewReservation("buffer")
	b := NewRecordBuffer(res)
	if b.Len() != 0 || b.Segments() != 0 || b.Fits(1) {
		t.Fatal("new buffer is not empty")
	}
	same := make([]kv, 3000) // all-equal keys, empty values
	for i := range same {
		same[i] = kv{[]byte("k"), nil}
	}
	fillAndCheck(t, b, same)
	empty := kv{nil, nil}
	off, err := b.Append(empty.key, empty.val)
	if err != nil {
		t.Fatal(err)
	}
	if k, v, _ := b.Get(off, nil); len(k) != 0 || len(v) != 0 {
		t.Errorf("empty record: %q %q", k, v)
	}
	b.Free()
	_ = res.Release()
	closeManager(t, m)
}

func TestRecordBufferLargeRecordSpansSegments(t *testing.T) {
	m := MustNewManager(Options{SegmentSize: 4096})
	res := m.NewReservation("buffer")
	b := NewRecordBuffer(res)
	small := kv{[]byte("a"), []byte("b")}
	big := kv{bytes.Repeat([]byte{'k'}, 5000), bytes.Repeat([]byte{1, 2, 3}, 3000)}
	o1, _ := b.Append(small.key, small.val)
	o2, _ := b.Append(big.key, big.val)
	o3, _ := b.Append(small.key, small.val)
	// The big record takes ceil(RecordSize/4096) fresh segments; the next small one
	// starts another.
	wantSegs := 1 + (RecordSize(len(big.key), len(big.val))+4095)/4096 + 1
	if b.Segments() != wantSegs || o2>>32 != 1 || uint32(o2) != 0 || o3>>32 != uint64(wantSegs-1) {
		t.Fatalf("segments %d (want %d), offsets %x %x %x", b.Segments(), wantSegs, o1, o2, o3)
	}
	scratch := make([]byte, 0, 10)
	k, v, scratch := b.Get(o2, scratch)
	if !bytes.Equal(k, big.key) || !bytes.Equal(v, big.val) || cap(scratch) < len(big.key)+len(big.val) {
		t.Fatal("big record differs")
	}
	k, v, _ = b.Get(o1, scratch)
	if string(k) != "a" || string(v) != "b" {
		t.Fatal("small record differs")
	}
	// A record within one segment aliases it and may be written in place.
	k[0] = 'z'
	if k2, _ := b.Key(o1, nil); string(k2) != "z" {
		t.Error("Get did not alias the segment")
	}
	b.Free()
	_ = res.Release()
	closeManager(t, m)
}

func TestRecordBufferBudgetExceededLeavesUnchanged(t *testing.T) {
	m := MustNewManager(Options{SegmentSize: 4096, Budget: 3 * 4096})
	res := m.NewReservation("buffer")
	b := NewRecordBuffer(res)
	val := make([]byte, 1000)
	var offs []uint64
	for {
		off, err := b.Append([]byte{byte(len(offs))}, val)
		if err != nil {
			if !errors.Is(err, ErrBudgetExceeded) {
				t.Fatal(err)
			}
			break
		}
		offs = append(offs, off)
	}
	n, size, segs := b.Len(), b.Bytes(), b.Segments()
	if segs != 3 || n != len(offs) {
		t.Fatalf("full buffer: %d segments, %d records", segs, n)
	}
	// A record larger than a segment fails too, and leaves the buffer unchanged.
	if _, err := b.Append(nil, make([]byte, 3*4096)); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("large Append: %v", err)
	}
	if b.Len() != n || b.Bytes() != size || b.Segments() != segs {
		t.Fatalf("failed Append changed the buffer: %d/%d/%d, was %d/%d/%d", b.Len(), b.Bytes(), b.Segments(), n, size, segs)
	}
	for i, off := range offs {
		if k, v, _ := b.Get(off, nil); len(k) != 1 || k[0] != byte(i) || len(v) != 1000 {
			t.Fatalf("record %d changed", i)
		}
	}
	// Reset keeps the segments for reuse: refilling takes none from the manager.
	used := m.Used()
	b.Reset()
	if b.Len() != 0 || b.Bytes() != 0 || b.Segments() != 0 || res.Segments() != 3 {
		t.Fatalf("after Reset: %d records, %d segments in use, %d held", b.Len(), b.Segments(), res.Segments())
	}
	for range offs {
		if _, err := b.Append([]byte{1}, val); err != nil {
			t.Fatalf("refill after Reset: %v", err)
		}
	}
	if m.Used() != used {
		t.Errorf("refill after Reset took memory: %d -> %d", used, m.Used())
	}
	// AppendForce goes past the budget.
	off := b.AppendForce([]byte("forced"), make([]byte, 5000))
	if k, _, _ := b.Get(off, nil); string(k) != "forced" || m.Used() <= m.Budget() {
		t.Errorf("AppendForce: key %q, used %d of %d", k, m.Used(), m.Budget())
	}
	b.Reset()
	b.FreeSpare()
	if res.Segments() != 0 || m.Used() != 0 {
		t.Errorf("after Reset and FreeSpare: %d segments held, %d used", res.Segments(), m.Used())
	}
	_ = res.Release()
	closeManager(t, m)
}

func TestRecordBufferFitsAndSize(t *testing.T) {
	for _, tc := range []struct{ k, v, want int }{{0, 0, 2}, {1, 1, 4}, {127, 0, 129}, {128, 0, 131}, {0, 16384, 16384 + 1 + 3}} {
		if got := RecordSize(tc.k, tc.v); got != tc.want {
			t.Errorf("RecordSize(%d, %d) = %d, want %d", tc.k, tc.v, got, tc.want)
		}
	}
	m := MustNewManager(Options{SegmentSize: 4096})
	res := m.NewReservation("fits")
	b := NewRecordBuffer(res)
	if _, err := b.Append(nil, make([]byte, 4000)); err != nil {
		t.Fatal(err)
	}
	used := RecordSize(0, 4000)
	if !b.Fits(4096-used) || b.Fits(4096-used+1) {
		t.Errorf("Fits wrong at the segment boundary (%d used)", used)
	}
	b.Free()
	_ = res.Release()
	closeManager(t, m)
}

// TestRecordBufferParallel runs one buffer per goroutine, each on a hash partition
// of the input, all drawing on one manager with a tiny budget.
func TestRecordBufferParallel(t *testing.T) {
	recs := randomRecords(2, 2000)
	const parts = 4
	for _, opts := range budgets {
		m := MustNewManager(opts)
		var wg sync.WaitGroup
		for p := 0; p < parts; p++ {
			var mine []kv
			for _, r := range recs {
				if Hash(r.key, 0)>>62 == uint64(p) {
					mine = append(mine, r)
				}
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				res := m.NewReservation(fmt.Sprintf("part%d", p))
				defer func() { _ = res.Release() }()
				b := NewRecordBuffer(res)
				defer b.Free()
				fillAndCheck(t, b, mine)
			}()
		}
		wg.Wait()
		closeManager(t, m)
	}
}

func TestAppendKVSplitKV(t *testing.T) {
	for _, tc := range []kv{{nil, nil}, {[]byte("k"), nil}, {nil, []byte("v")}, {bytes.Repeat([]byte("k"), 300), []byte("value")}} {
		enc := AppendKV([]byte("x"), tc.key, tc.val)[1:]
		k, v, err := SplitKV(enc)
		if err != nil || !bytes.Equal(k, tc.key) || !bytes.Equal(v, tc.val) || cap(k) != len(k) {
			t.Errorf("SplitKV(AppendKV(%q, %q)) = %q, %q, %v", tc.key, tc.val, k, v, err)
		}
	}
	for _, bad := range [][]byte{nil, {5, 'a'}, {0x80}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}} {
		if _, _, err := SplitKV(bad); err == nil {
			t.Errorf("SplitKV(%x) did not fail", bad)
		}
	}
}
