package typed

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/weirdata/weir/memory"
)

// keyedSumKeyer returns the keyer of keyedSum by K and keyedSum's codec.
func keyedSumKeyer(t testing.TB) (*Keyer[keyedSum], *memory.Codec[keyedSum]) {
	k, err := NewKeyer[keyedSum, int64](func(x keyedSum) int64 { return x.K })
	if err != nil {
		t.Fatal(err)
	}
	codec, err := memory.NewCodec[keyedSum]()
	if err != nil {
		t.Fatal(err)
	}
	return k, codec
}

// sumTable returns an empty group table of keyedSum by K that adds up Sum and N.
func sumTable(t testing.TB, groups, denseFloor int) *groupTable[keyedSum] {
	k, codec := keyedSumKeyer(t)
	add := func(a, b keyedSum) keyedSum { return keyedSum{a.K, a.Sum + b.Sum, a.N + b.N} }
	return newGroupTable(k, codec, add, groups, denseFloor)
}

// TestGroupTableModes checks a group table of int64 keys against a map, in
// the dense mode and after it turns to hash mode: keys in order and shuffled,
// negative keys, keys at the ends of int64, a range that only widens downward,
// and keys that spread too far for dense mode part way through; then again
// after a reset, which keeps the mode.
func TestGroupTableModes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	seq := func(from, n int64) []int64 {
		ks := make([]int64, n)
		for i := range ks {
			ks[i] = from + int64(i)
		}
		return ks
	}
	shuffled := func(ks []int64) []int64 {
		r.Shuffle(len(ks), func(i, j int) { ks[i], ks[j] = ks[j], ks[i] })
		return ks
	}
	repeat := func(ks []int64, times int) []int64 {
		var out []int64
		for range times {
			out = append(out, ks...)
		}
		return shuffled(out)
	}
	const never = math.MaxInt
	for _, tc := range []struct {
		name     string
		keys     []int64
		minFloor int // the table ends in dense mode with a floor of at least this
	}{
		{"in-order", seq(0, 50000), 0},
		{"shuffled-repeated", repeat(seq(0, 30000), 3), 1 << 20},
		// keys spanning the floor exactly, in any order
		{"shuffled-floor", repeat(seq(1000, 4096), 2), 4096},
		{"negative", repeat(seq(-20000, 20000), 2), 1 << 20},
		{"downward", func() []int64 { ks := seq(0, 40000); slices.Reverse(ks); return ks }(), 0},
		{"int64-ends", repeat(append(seq(math.MinInt64, 100), seq(math.MaxInt64-99, 100)...), 2), never},
		// MaxInt64 encodes as the largest word: only a range that
		// reaches it from below, ending at 2^64, holds it
		{"top-end", repeat(seq(math.MaxInt64-999, 1000), 2), 4096},
		{"top-first", append([]int64{math.MaxInt64}, repeat(seq(math.MaxInt64-999, 999), 2)...), never},
		{"below-top-end", repeat(seq(math.MaxInt64-1000, 1000), 2), 4096},
		{"bottom-end", repeat(seq(math.MinInt64, 1000), 2), 4096},
		{"spread", append(repeat(seq(0, 5000), 2), shuffled([]int64{1 << 40, -1 << 50, 7, 1 << 20, 3})...), never},
		{"sparse-random", func() []int64 {
			ks := make([]int64, 20000)
			for i := range ks {
				ks[i] = r.Int64()
			}
			return ks
		}(), never},
	} {
		floors := []int{0, 4096, 1 << 20}
		if testing.Short() { // one goroutine: the race run needs one floor
			floors = floors[1:2]
		}
		for _, floor := range floors {
			for _, mode := range []string{"direct", "direct-batch", "indexed"} {
				direct := mode != "indexed"
				t.Run(fmt.Sprintf("%s/floor=%d/%s", tc.name, floor, mode), func(t *testing.T) {
					tab := sumTable(t, 16, floor)
					tab.direct = direct    // the records in the entries, or behind indexes
					for round := range 2 { // a reset table keeps its mode
						want := map[int64]int64{}
						vs := make([]keyedSum, len(tc.keys))
						for i, key := range tc.keys {
							vs[i] = keyedSum{K: key, Sum: int64(i), N: 1}
							want[key] += int64(i)
						}
						if mode == "direct-batch" {
							addBatches(t, tab, vs, r)
						} else {
							for i := range vs {
								tab.add(&vs[i])
							}
						}
						checkTable(t, tab, want, round)
						if want := floor >= tc.minFloor; (want || tc.minFloor == never) && tab.isDense != want {
							t.Errorf("round %d: dense mode %v at the end, want %v", round, tab.isDense, want)
						}
						if entries := int64(tab.denseLen()); tab.isDense && tab.bytes() < 24*entries*b2i(direct)+4*entries*b2i(!direct) {
							t.Errorf("bytes %d do not count the dense array of %d entries", tab.bytes(), entries)
						}
						tab.reset()
					}
				})
			}
		}
	}
}

// TestGroupTableIndexEntries checks the rule for records behind indexes: keys
// one in 8 (TPC-H's order keys over two subtasks) stay dense with indexes
// (IndexEntries a group) and turn the table to hashing with the records in
// the entries (DenseEntries a group); one in 13 turns both. Keys arrive in
// order, as an ordered file's keys do (in any order the first keys span the
// range before its groups arrive, and the floor decides). The sums are
// checked against a map either way.
func TestGroupTableIndexEntries(t *testing.T) {
	for _, tc := range []struct {
		stride              int64
		denseIndexed, dense bool
	}{
		{8, true, false},
		{11, true, false},
		{13, false, false},
		{3, true, true},
	} {
		for _, order := range []string{"ascending", "descending"} {
			for _, direct := range []bool{false, true} {
				t.Run(fmt.Sprintf("stride=%d/%s/direct=%v", tc.stride, order, direct), func(t *testing.T) {
					keys := make([]int64, 50000)
					for i := range keys {
						keys[i] = 1000 + tc.stride*int64(i)
					}
					if order == "descending" {
						slices.Reverse(keys)
					}
					tab := sumTable(t, 16, 4096)
					tab.direct = direct
					want := map[int64]int64{}
					for i, key := range keys {
						for rep := range int64(2) {
							v := keyedSum{K: key, Sum: int64(i) + rep, N: 1}
							want[key] += v.Sum
							tab.add(&v)
						}
					}
					checkTable(t, tab, want, 0)
					if wantDense := (direct && tc.dense) || (!direct && tc.denseIndexed); tab.isDense != wantDense {
						t.Errorf("dense mode %v at the end, want %v", tab.isDense, wantDense)
					}
				})
			}
		}
	}
}

// TestGroupTableRebase checks that an emptied dense table takes a key far
// from its range into the arrays it has (a combiner's window moving on with
// the keys), not into new ones, and still adds up correctly there.
func TestGroupTableRebase(t *testing.T) {
	for _, direct := range []bool{true, false} {
		t.Run(fmt.Sprintf("direct=%v", direct), func(t *testing.T) {
			tab := sumTable(t, 16, 4096)
			tab.direct, tab.noHash = direct, true
			for round, from := range []int64{0, 1 << 20, 1 << 40, 5000} {
				want := map[int64]int64{}
				for i := range int64(8000) { // 4000 keys: the arrays reach the floor
					v := keyedSum{K: from + i%4000, Sum: i, N: 1}
					want[v.K] += v.Sum
					if !tab.add(&v) {
						t.Fatalf("round %d: key %d refused", round, v.K)
					}
				}
				checkTable(t, tab, want, round)
				first := func() unsafe.Pointer {
					if direct {
						return unsafe.Pointer(&tab.dvals[0])
					}
					return unsafe.Pointer(&tab.dense[0])
				}
				arr, n := first(), tab.denseLen()
				tab.reset()
				if first() != arr || tab.denseLen() != n {
					t.Errorf("round %d: the arrays changed after a reset", round)
				}
				v := keyedSum{K: from + 1<<30, Sum: 1, N: 1}
				if !tab.add(&v) {
					t.Fatalf("round %d: the empty table refused key %d", round, v.K)
				}
				if first() != arr || tab.denseLen() != n {
					t.Errorf("round %d: a key far away made new arrays (%d entries, had %d)", round, tab.denseLen(), n)
				}
				checkTable(t, tab, map[int64]int64{v.K: 1}, round)
				tab.reset()
			}
		})
	}
}

// addBatches adds vs to tab as Final does, in batches of random sizes
// with addBatch, one record with add where addBatch adds none, and checks
// that addBatch stops only at a record it could not hold or one that
// widened the table.
func addBatches(t *testing.T, tab *groupTable[keyedSum], vs []keyedSum, r *rand.Rand) {
	t.Helper()
	for len(vs) > 0 {
		c := vs[:min(len(vs), 1+r.IntN(600))]
		for len(c) > 0 {
			from, base, dense := tab.denseLen(), tab.base, tab.isDense
			n := tab.addBatch(c)
			switch {
			case n == len(c):
			case n == 0:
				tab.add(&c[0])
				n = 1
			case dense && tab.isDense && tab.denseLen() == from && tab.base == base:
				// it stopped without widening: c[n] must lie beyond the range
				if off := tab.word(&c[n]) - tab.base; off < tab.denseLen() {
					t.Fatalf("addBatch stopped at key %d, which the dense range holds", c[n].K)
				}
			}
			c, vs = c[n:], vs[n:]
		}
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// BenchmarkGroupTable adds 4M records with int64 keys drawn from [0, keys)
// (PageRank's contributions to the pages of one subtask, say) to a table, in
// dense mode and in hash mode. The table is reset and reused from one op to
// the next, as a loop's task reuses it from one superstep to the next, so
// what is timed is adding, not allocating. Mode dense holds the records in
// the entries (as for records of up to directBytes), dense-indexed behind
// indexes; dense-batch adds batches of 1024 with addBatch, which reads ahead.
func BenchmarkGroupTable(b *testing.B) {
	for _, keys := range []int64{1 << 16, 1 << 20} {
		r := rand.New(rand.NewPCG(1, 1))
		in := make([]keyedSum, 4<<20)
		for i := range in {
			in[i] = keyedSum{K: r.Int64N(keys), Sum: 1, N: 1}
		}
		for _, mode := range []string{"dense", "dense-batch", "dense-indexed", "hash"} {
			b.Run(fmt.Sprintf("keys=%d/%s", keys, mode), func(b *testing.B) {
				tab := sumTable(b, 1024, 1<<20)
				tab.direct = mode != "dense-indexed"
				if mode == "hash" {
					tab.toHash(0)
				}
				for b.Loop() {
					tab.reset()
					if mode == "dense-batch" {
						for lo := 0; lo < len(in); lo += 1024 {
							for c := in[lo : lo+1024]; len(c) > 0; {
								n := tab.addBatch(c)
								if n == 0 {
									b.Fatalf("addBatch added none of %d", len(c))
								}
								c = c[n:]
							}
						}
						continue
					}
					for i := range in {
						tab.add(&in[i])
					}
				}
				if tab.isDense != (mode != "hash") {
					b.Fatalf("dense mode %v", tab.isDense)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(in)), "ns/record")
			})
		}
	}
}

// sumCollector adds up what a group table or combiner sends, by key.
type sumCollector struct {
	sums    map[int64]int64
	n       int64 // records received
	batches int
}

func (c *sumCollector) collect(b []keyedSum) error {
	for _, v := range b {
		c.sums[v.K] += v.Sum
	}
	c.n += int64(len(b))
	c.batches++
	return nil
}

// checkEmitted checks that tab sends every group once, with its sum, in
// batches of at most 7.
// checkTable checks that tab holds the groups of want, with their sums,
// both as emitted and as kept, after round rounds.
func checkTable(t *testing.T, tab *groupTable[keyedSum], want map[int64]int64, round int) {
	t.Helper()
	if tab.groups() != len(want) {
		t.Fatalf("round %d: %d groups, want %d", round, tab.groups(), len(want))
	}
	checkEmitted(t, tab, want)
	for _, v := range tab.all() {
		if want[v.K] != v.Sum {
			t.Fatalf("round %d: key %d sums to %d, want %d", round, v.K, v.Sum, want[v.K])
		}
	}
}

func checkEmitted(t *testing.T, tab *groupTable[keyedSum], want map[int64]int64) {
	t.Helper()
	c := &sumCollector{sums: map[int64]int64{}}
	if err := tab.emit(c.collect, 7); err != nil {
		t.Fatal(err)
	}
	if c.n != int64(len(want)) || c.batches != (len(want)+6)/7 {
		t.Fatalf("emit sent %d records in %d batches, want %d in batches of 7", c.n, c.batches, len(want))
	}
	checkGroups(t, slices.Collect(maps.Keys(c.sums)), want, func(k int64) int64 { return k }, func(k int64) int64 { return c.sums[k] })
}

type keyedSum struct {
	K   int64
	Sum int64
	N   int32
}

// checkGroups checks got, one record per group, against want by key.
func checkGroups[T any, K, V comparable](t testing.TB, got []T, want map[K]V, key func(T) K, val func(T) V) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d groups, want %d", len(got), len(want))
	}
	for _, g := range got {
		w, ok := want[key(g)]
		if !ok {
			t.Fatalf("group %v not expected", key(g))
		}
		if v := val(g); v != w {
			t.Fatalf("group %v: %v, want %v", key(g), v, w)
		}
	}
}

// TestGroupTableGrowsByDoubling checks that a table's groups, in hash mode
// and behind a dense index, move to new arrays about log2(groups) times:
// append grows a large slice by a quarter, which would copy (and allocate)
// the groups of a large aggregation four times over.
func TestGroupTableGrowsByDoubling(t *testing.T) {
	const n = 200000
	for _, tc := range []struct {
		name string
		key  func(i int) int64
	}{
		{"hash", func(i int) int64 { return int64(i) << 40 }},
		{"dense-indexes", func(i int) int64 { return int64(i) * 4 }}, // TPC-H's order keys: 1 in 4
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, codec := keyedSumKeyer(t)
			tb := newGroupTable(k, codec, func(a, b keyedSum) keyedSum { return a }, 16, 1<<10)
			tb.direct = false // the records behind indexes, as records over 16 bytes are
			moves, last := 0, unsafe.Pointer(nil)
			for i := range n {
				v := keyedSum{K: tc.key(i), Sum: 1, N: 1}
				tb.add(&v)
				if p := unsafe.Pointer(unsafe.SliceData(tb.vals)); p != last {
					moves, last = moves+1, p
				}
			}
			if tb.groups() != n {
				t.Fatalf("%d groups, want %d", tb.groups(), n)
			}
			if want := 20; moves > want { // log2(200000) ≈ 18, plus a move to hash mode
				t.Errorf("the groups moved %d times, want at most %d", moves, want)
			}
			if c := cap(tb.vals); c > 2*n {
				t.Errorf("capacity %d for %d groups", c, n)
			}
		})
	}
}
