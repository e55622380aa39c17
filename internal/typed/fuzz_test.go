package typed

import (
	"context"
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weirdata/weir/memory"
)

// fuzzKeys makes int64 keys from data, 3 bytes a key: the first picks a
// region (near 0, twice as often; near MinInt64; near MaxInt64; spread over
// the whole range), the other two an offset in it. So the keys move a group
// table between dense and hash mode and across the int64 ends.
func fuzzKeys(data []byte) []int64 {
	var ks []int64
	for ; len(data) >= 3; data = data[3:] {
		off := int64(binary.LittleEndian.Uint16(data[1:3]))
		switch data[0] % 5 {
		case 0, 1:
			ks = append(ks, off-1000)
		case 2:
			ks = append(ks, math.MinInt64+off)
		case 3:
			ks = append(ks, math.MaxInt64-off)
		default:
			ks = append(ks, off<<40^int64(data[0])<<56)
		}
	}
	return ks
}

// fuzzSeeds are inputs the seed corpora share: dense keys, keys at both
// ends, spread keys, repeats, nothing.
func fuzzSeeds() [][]byte {
	seq := func(region byte, n int, step uint16) []byte {
		var b []byte
		for i := range n {
			b = append(b, region)
			b = binary.LittleEndian.AppendUint16(b, uint16(i)*step)
		}
		return b
	}
	return [][]byte{
		nil,
		seq(0, 300, 1),
		seq(0, 200, 37),
		append(seq(2, 50, 1), seq(3, 50, 1)...),
		append(seq(1, 100, 1), seq(4, 20, 3)...),
		append(seq(3, 100, 2), seq(3, 100, 2)...),
		{3, 0, 0, 0, 1, 0, 0, 2, 0},
	}
}

// FuzzGroupTable adds fuzzed keys to a group table (dense or hash, records
// in the entries or behind indexes, a small or large floor, one at a time
// or in batches) and checks its groups against a map, twice: the second time
// after a reset, which keeps the table's mode. With noHash, the keys the
// table refuses are left out of the map, as the combiner sends them on.
func FuzzGroupTable(f *testing.F) {
	for i, s := range fuzzSeeds() {
		for mode := range uint8(8) {
			f.Add(uint8(i), mode, s)
		}
	}
	f.Fuzz(func(t *testing.T, floorSel, mode uint8, data []byte) {
		keys := fuzzKeys(data)
		floor := []int{0, 64, 4096}[floorSel%3]
		tab := sumTable(t, 16, floor)
		tab.direct = mode&1 == 0
		batches := mode&2 != 0
		tab.noHash = mode&4 != 0
		r := rand.New(rand.NewPCG(uint64(len(data)), uint64(mode)))
		for round := range 2 {
			want := map[int64]int64{}
			vs := make([]keyedSum, len(keys))
			for i, key := range keys {
				vs[i] = keyedSum{K: key, Sum: int64(i) + 1, N: 1}
			}
			switch {
			case tab.noHash:
				for i := range vs {
					if tab.add(&vs[i]) {
						want[vs[i].K] += vs[i].Sum
					} else if !tab.isDense {
						t.Fatal("a table with noHash left dense mode")
					}
				}
			case batches:
				addBatches(t, tab, vs, r)
			default:
				for i := range vs {
					tab.add(&vs[i])
				}
			}
			if !tab.noHash {
				for _, v := range vs {
					want[v.K] += v.Sum
				}
			}
			checkTable(t, tab, want, round)
			tab.reset()
		}
	})
}

// sliceBatches hands out batches of a slice, then io.EOF.
type sliceBatches[T any] struct{ b [][]T }

func (s *sliceBatches[T]) Next(context.Context) ([]T, error) {
	if len(s.b) == 0 {
		return nil, io.EOF
	}
	b := s.b[0]
	s.b = s.b[1:]
	return b, nil
}

// FuzzTypedBuild builds a typed join's build side over fuzzed keys, under a
// limit that may be too small, and checks it against a map. When it fits,
// every key (and keys absent from it) probes to its records in input order,
// whether the index is the dense array or hash slots, and it is dense
// exactly when the dense rule says so. When it overflows, the replay hands
// back every record, serialized, in input order.
func FuzzTypedBuild(f *testing.F) {
	for i, s := range fuzzSeeds() {
		f.Add(uint8(i), uint16(0), s)
		f.Add(uint8(i), uint16(1+i*100), s)
	}
	f.Fuzz(func(t *testing.T, batchSel uint8, limitSel uint16, data []byte) {
		k, codec := keyedSumKeyer(t)
		keys := fuzzKeys(data)
		in := make([]keyedSum, len(keys))
		want := map[int64][]int64{} // key: the records' Sums in input order
		for i, key := range keys {
			in[i] = keyedSum{K: key, Sum: int64(i)}
			want[key] = append(want[key], int64(i))
		}
		size := 1 + int(batchSel)%64
		var bs [][]keyedSum
		for lo := 0; lo < len(in); lo += size {
			bs = append(bs, in[lo:min(lo+size, len(in))])
		}
		mgr, err := memory.NewManager(memory.Options{SegmentSize: 4096})
		if err != nil {
			t.Fatal(err)
		}
		limit := int64(limitSel) * 64 // 0: none
		res := mgr.NewReservation("fuzz")
		src := NewInput[keyedSum](context.Background(), &sliceBatches[keyedSum]{b: bs}, k, codec)
		src.Rows = int(batchSel) * 97 // an estimate, right or wrong: presized from 1024 on
		b := NewBuild(src, res, limit, false)
		replay, err := b.Run(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			_ = res.Release()
			if err := mgr.Close(); err != nil {
				t.Error(err)
			}
		}()
		if replay != nil {
			var got []keyedSum
			for {
				key, val, ok := replay.Next()
				if !ok {
					break
				}
				var v keyedSum
				if _, err := codec.Decode(val, &v); err != nil {
					t.Fatal(err)
				}
				if want := k.Append(nil, &v); !slices.Equal(key, want) {
					t.Fatalf("replayed key %x, want %x", key, want)
				}
				got = append(got, v)
			}
			if err := replay.Err(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, in) {
				t.Fatalf("replayed %d records, want the %d in input order", len(got), len(in))
			}
			return
		}
		if len(in) > 0 {
			lo, hi := slices.Min(keys), slices.Max(keys)
			span := uint64(hi) - uint64(lo)
			if rule := Dense(span, len(in), DenseFloor(limit, 4)); b.Dense() != rule {
				t.Fatalf("dense index %v, the rule says %v (span %d, %d records)", b.Dense(), rule, span, len(in))
			}
		}
		checkProbes(t, b, k, append(slices.Clone(keys), math.MinInt64, math.MaxInt64, 0, -1001, 64536), want)
	})
}
