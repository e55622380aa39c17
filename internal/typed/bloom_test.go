package typed

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weirdata/weir/memory"
)

// TestKeyFilter checks the build side's key filter on the hashes of real
// keys: every key it holds passes (no false negative), absent keys pass at
// most 3% of the time, and it turns itself off after filterTrial probes that
// are mostly present, not after probes that are mostly absent.
func TestKeyFilter(t *testing.T) {
	hash := func(k uint64) uint64 {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], k)
		return memory.Hash(b[:], joinSeed)
	}
	for _, n := range []int{filterMin - 1, filterMin, 100_000, 300_001} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			hs := make([]uint64, n)
			for i := range hs {
				hs[i] = hash(uint64(i) * 4) // keys one in four
			}
			f := newKeyFilter(hs)
			if n < filterMin {
				if f != nil {
					t.Fatalf("a filter of %d keys", n)
				}
				return
			}
			if got, want := int64(len(f.words))*8, filterBytes(n); got != want {
				t.Fatalf("%d bytes, filterBytes says %d", got, want)
			}
			for i, h := range hs {
				if !f.mayHold(h) {
					t.Fatalf("key %d was added and is ruled out", 4*i)
				}
			}
			if !f.off {
				t.Errorf("on after %d probes of present keys", filterTrial)
			}
			f.probes, f.ruled, f.off = 0, 0, false
			passed := 0
			const absent = 200_000
			for i := range absent {
				if f.mayHold(hash(uint64(i)*4 + 1)) {
					passed++
				}
			}
			t.Logf("n=%d: %.4f of absent keys pass, %d bits a key", n, float64(passed)/absent, len(f.words)*64/n)
			if rate := float64(passed) / absent; rate > 0.03 {
				t.Errorf("%.4f of absent keys pass", rate)
			}
			if f.off {
				t.Error("off after probes of absent keys")
			}
		})
	}
}

// TestBuildFiltered joins a hash-mode build side large enough for the key
// filter with probes mostly absent from it, and checks every probe's records
// against a map: the filter stays on and loses no match; then with probes
// all present, after which it has turned itself off.
func TestBuildFiltered(t *testing.T) {
	k, codec := keyedSumKeyer(t)
	r := rand.New(rand.NewPCG(9, 9))
	b := &Build[keyedSum]{codec: codec, k: k.Appender(), ksize: k.Size, koff: make([]int32, 1),
		arena: memory.NewArena(0), res: mustManager(t).NewReservation("test")}
	defer func() { _ = b.res.Release() }()
	want := map[int64][]int64{}
	var in []keyedSum
	for i := range 3 * filterMin {
		key := r.Int64() >> 1
		for d := range 1 + i%3 { // some keys repeat
			in = append(in, keyedSum{K: key, Sum: int64(len(in) + d)})
			want[key] = append(want[key], in[len(in)-1].Sum)
		}
	}
	if n, err := b.add(in); err != nil || n != len(in) {
		t.Fatalf("add: %d of %d, %v", n, len(in), err)
	}
	b.index()
	if b.dense != nil || b.filter == nil {
		t.Fatalf("dense %v, filter %v: want hash slots with a filter", b.dense != nil, b.filter != nil)
	}
	var probes []int64
	for i := range 2 * filterTrial {
		if i%10 == 0 {
			probes = append(probes, in[r.IntN(len(in))].K)
		} else {
			probes = append(probes, r.Int64()>>1)
		}
	}
	checkProbes(t, b, k, probes, want)
	if b.filter == nil {
		t.Fatal("the filter turned off while it ruled out 90% of the probes")
	}
	probes = probes[:0]
	for range 2 * filterTrial {
		probes = append(probes, in[r.IntN(len(in))].K)
	}
	b.filter.probes, b.filter.ruled = 0, 0
	checkProbes(t, b, k, probes, want)
	if b.filter != nil {
		t.Fatal("the filter stayed on while every probe was present")
	}
}

func mustManager(t *testing.T) *memory.Manager {
	mgr, err := memory.NewManager(memory.Options{SegmentSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}
