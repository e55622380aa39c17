package typed

import (
	"context"
	"testing"
	"unsafe"

	"github.com/weirdata/weir/memory"
)

// TestBuildPresized checks a build side sized by its input's estimate: with
// the right estimate its records never move and its reservation covers the
// arrays; with one too small they grow as without; under a limit the
// arrays take at most a quarter of it up front. Every record is found.
func TestBuildPresized(t *testing.T) {
	const n = 50000
	in := make([]keyedSum, n)
	for i := range in {
		in[i] = keyedSum{K: int64(i) << 33, Sum: int64(i)} // sparse: a hash index
	}
	for _, tc := range []struct {
		name      string
		rows      int
		limit     int64
		maxMoves  int
		wantUpTo  int // the presized capacity, at most
		wantAtLst int
	}{
		{"right", n, 0, 0, n, n},
		{"too-small", 2000, 0, 8, 2000, 2000},
		{"limited", n, 1 << 20, 8, (1 << 20) / 4 / int(unsafe.Sizeof(keyedSum{})+4+8), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, codec := keyedSumKeyer(t)
			mgr, err := memory.NewManager(memory.Options{SegmentSize: 4096})
			if err != nil {
				t.Fatal(err)
			}
			res := mgr.NewReservation("presize")
			var bs [][]keyedSum
			for lo := 0; lo < n; lo += 1000 {
				bs = append(bs, in[lo:lo+1000])
			}
			src := NewInput[keyedSum](context.Background(), &sliceBatches[keyedSum]{b: bs}, k, codec)
			src.Rows = tc.rows
			b := NewBuild(src, res, tc.limit, false)
			if c := cap(b.vals); c > tc.wantUpTo || c < tc.wantAtLst {
				t.Fatalf("presized for %d records, want %d-%d", c, tc.wantAtLst, tc.wantUpTo)
			}
			if tc.limit > 0 {
				return // the limit's bound on the presize is what this case checks
			}
			moves, last := 0, unsafe.Pointer(unsafe.SliceData(b.vals))
			ctx := context.Background()
			for {
				batch, err := src.In.Next(ctx)
				if err != nil {
					break
				}
				if _, err := b.add(batch); err != nil {
					t.Fatal(err)
				}
				if p := unsafe.Pointer(unsafe.SliceData(b.vals)); p != last {
					moves, last = moves+1, p
				}
			}
			if moves > tc.maxMoves {
				t.Errorf("the records moved %d times, want at most %d", moves, tc.maxMoves)
			}
			if arrays := int64(cap(b.vals))*int64(unsafe.Sizeof(keyedSum{})) + int64(cap(b.koff))*4 + int64(cap(b.keys)); res.Bytes() < arrays {
				t.Errorf("reserved %d bytes, the arrays take %d", res.Bytes(), arrays)
			}
			b.index()
			for i := 0; i < n; i += 7 {
				key := k.Append(nil, &in[i])
				idx := b.lookup(memory.Hash(key, joinSeed), key) - 1
				if idx < 0 || b.vals[idx].Sum != int64(i) {
					t.Fatalf("record %d: found %d", i, idx)
				}
			}
			_ = res.Release()
			if err := mgr.Close(); err != nil {
				t.Error(err)
			}
		})
	}
}
