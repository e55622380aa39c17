package dataset

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/memory"
)

type wideCustomer struct {
	ID     int64
	Nation string
	Note   string // long: the build side outgrows a few MiB
}

// TestTypedJoinOutgrowsItsMemory runs hash joins whose build side (4 MB of
// customers with long notes) fits an unlimited budget but not a 3 MiB one: there
// the typed build fills its first megabytes and then hands what it holds and
// the rest of its input to the spilling hash join. Every kind, either build
// side, equals the oracle, and the notes arrive intact.
func TestTypedJoinOutgrowsItsMemory(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	var cs []customer
	var wide []wideCustomer
	for i := int64(1); i <= 20000; i++ {
		if r.IntN(5) == 0 {
			continue
		}
		c := customer{ID: i, Nation: fmt.Sprintf("N%d", r.IntN(25))}
		cs = append(cs, c)
		wide = append(wide, wideCustomer{ID: i, Nation: c.Nation, Note: strings.Repeat(c.Nation, 100)})
	}
	var os []order
	for i := int64(1); i <= 30000; i++ {
		os = append(os, order{ID: i, Customer: 1 + r.Int64N(22000)})
	}
	combine := func(o *order, c *wideCustomer) joined {
		var j joined
		if o != nil {
			j.Order = o.ID
		}
		if c != nil {
			if c.Note != strings.Repeat(c.Nation, 100) {
				panic(fmt.Sprintf("customer %d: note %.20q… does not match nation %s", c.ID, c.Note, c.Nation))
			}
			j.Customer, j.Nation = c.ID, c.Nation
		}
		return j
	}
	for _, kind := range []string{"inner", "left", "right", "full", "semi", "anti"} {
		want := oracleJoin(cs, os, kind)
		for _, hint := range []JoinHint{RepartitionHashFirst, RepartitionHashSecond} {
			for _, c := range []config{{"p1-unlimited", 1, 0}, {"p2-3MiB", 2, 3 << 20}} {
				t.Run(fmt.Sprintf("%s/%s/%s", kind, hint, c.name), func(t *testing.T) {
					env := newEnv(t, c)
					ords, custs := FromSlice(env, os), FromSlice(env, wide)
					got := Collect(joinOfKind(kind, ords, custs, func(c wideCustomer) int64 { return c.ID }, combine, hint))
					res, err := env.Execute(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					if g := sortJoined(got.Values()); !slices.Equal(g, want) {
						t.Fatalf("got %d rows, want %d", len(g), len(want))
					}
					if c.memory > 0 && hint == RepartitionHashSecond && spilled(res) == 0 {
						t.Errorf("a 4 MB build side under a 3 MiB budget spilled nothing")
					}
				})
			}
		}
	}
}

// TestTypedBuildIndexes builds typed join tables over int64 keys, probes them
// and compares every chain with a map: keys dense enough for the dense array
// (with duplicates, negative keys, keys at the top of int64) and keys too
// spread for it, which get hash slots; probes below, inside and above the
// keys' range.
func TestTypedBuildIndexes(t *testing.T) {
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
				b := &typedBuild[keyedSum]{codec: codec, k: k.appender(), ksize: k.size, koff: make([]int32, 1),
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
				out := &sliceCollector[int64]{}
				p := &typedProbe[keyedSum, keyedSum, int64]{build: b, k: k.appender(), next: out, batch: 1,
					kind: typedKind{pairs: true}, pair: func(b *keyedSum, _ *keyedSum) int64 { return b.Sum }}
				probes := slices.Clone(tc.keys)
				probes = append(probes, math.MinInt64, math.MaxInt64, -1, 0, 1, 3, 5001, -2001, math.MaxInt64-1000)
				for _, word := range []bool{true, false} { // the keyer's word, or the encoded key
					p.word = nil
					if word {
						p.word = k.word
					}
					for _, key := range probes {
						out.vals = out.vals[:0]
						if err := p.probe([]keyedSum{{K: key}}); err != nil {
							t.Fatal(err)
						}
						if !slices.Equal(out.vals, want[key]) {
							t.Fatalf("key %d (word %v): records %v, want %v", key, word, out.vals, want[key])
						}
					}
				}
			})
		}
	}
}

// sliceCollector appends what it collects.
type sliceCollector[T any] struct{ vals []T }

func (c *sliceCollector[T]) collect(b []T) error { c.vals = append(c.vals, b...); return nil }
func (c *sliceCollector[T]) close() error        { return nil }
