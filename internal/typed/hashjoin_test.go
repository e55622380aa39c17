package typed

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weirdata/weir/memory"
)

// TestBuildIndexes builds typed join tables over int64 keys, probes them
// and compares every chain with a map: keys dense enough for the dense array
// (with duplicates, negative keys, keys at the top of int64) and keys too
// spread for it, which get hash slots; probes below, inside and above the
// keys' range.
func TestBuildIndexes(t *testing.T) {
	k, codec := keyedSumKeyer(t)
	r := rand.New(rand.NewPCG(4, 4))
	keys := func(from, n int64, dups int) []int64 {
		var ks []int64
		for i := range n {
			for range 1 + r.IntN(dups) {
				ks = append(ks, from+i)
			}
		}
		r.Shuffle(len(ks), func(i, j int) { ks[i], ks[j] = ks[j], ks[i] })
		return ks
	}
	spread := make([]int64, 3000)
	for i := range spread {
		spread[i] = r.Int64() - r.Int64()
	}
	for _, tc := range []struct {
		name  string
		keys  []int64
		dense bool
	}{
		{"dense", keys(0, 5000, 1), true},
		{"dense-duplicates", keys(-2000, 4000, 4), true},
		{"gaps", func() []int64 { // one key in four
			var ks []int64
			for _, k := range keys(0, 4000, 2) {
				ks = append(ks, 4*k)
			}
			return ks
		}(), true},
		{"top", keys(math.MaxInt64-999, 1000, 2), true},
		{"spread", spread, false},
		{"empty", nil, false},
	} {
		for _, budget := range []int64{0, 1 << 20} {
			t.Run(fmt.Sprintf("%s/budget=%d", tc.name, budget), func(t *testing.T) {
				mgr, err := memory.NewManager(memory.Options{SegmentSize: 4096, Budget: budget})
				if err != nil {
					t.Fatal(err)
				}
				b := &Build[keyedSum]{codec: codec, k: k.Appender(), ksize: k.Size, koff: make([]int32, 1),
					arena: memory.NewArena(0), res: mgr.NewReservation("test")}
				defer func() { _ = b.res.Release() }()
				want := map[int64][]int64{} // key: the records' Sums in input order
				var in []keyedSum
				for i, key := range tc.keys {
					in = append(in, keyedSum{K: key, Sum: int64(i)})
					want[key] = append(want[key], int64(i))
				}
				if n, err := b.add(in); err != nil || n != len(in) {
					t.Fatalf("add: %d of %d, %v", n, len(in), err)
				}
				b.index()
				if (b.dense != nil) != tc.dense {
					t.Fatalf("dense index %v, want %v", b.dense != nil, tc.dense)
				}
				// with memory to lend, a dense index of repeated keys sorts
				// them: every chain runs over consecutive records; with 1 MiB
				// it cannot, and keeps the input order
				consecutive := true
				for i, e := range b.next {
					consecutive = consecutive && (e == 0 || e == int32(i+2))
				}
				if want := budget == 0 || len(want) == len(in); b.dense != nil && consecutive != want {
					t.Errorf("chains over consecutive records: %v, want %v", consecutive, want)
				}
				probes := append(slices.Clone(tc.keys), math.MinInt64, math.MaxInt64, -1, 0, 1, 3, 5001, -2001, math.MaxInt64-1000)
				checkProbes(t, b, k, probes, want)
			})
		}
	}
}

// checkProbes probes b with one record of each key in probes, through the
// keyer's word and through the encoded key, and checks that each finds the
// Sums of want[key], the build records of that key in input order.
func checkProbes(t *testing.T, b *Build[keyedSum], k *Keyer[keyedSum], probes []int64, want map[int64][]int64) {
	t.Helper()
	var got []int64
	p := &Probe[keyedSum, keyedSum, int64]{build: b, k: k.Appender(), batch: 1,
		next: func(o []int64) error { got = append(got, o...); return nil },
		kind: Kind{pairs: true}, pair: func(b *keyedSum, _ *keyedSum) int64 { return b.Sum }}
	for _, word := range []bool{true, false} {
		p.word = nil
		if word {
			p.word = k.Word
		}
		for _, key := range probes {
			got = got[:0]
			if err := p.probe([]keyedSum{{K: key}}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want[key]) {
				t.Fatalf("key %d (word %v): records %v, want %v", key, word, got, want[key])
			}
		}
	}
}
