package flow

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/memory"
)

// partitionCase is one partitioner under test with the property its output must
// have.
type partitionCase struct {
	name  string
	part  Partitioner[rec]
	equal bool // needs nProd == nCons
	check func(t *testing.T, in [][]rec, got [][]rec)
}

func partitionCases() []partitionCase {
	return []partitionCase{
		{name: "forward", part: Partitioner[rec]{Strategy: Forward}, equal: true, check: checkForward},
		{name: "hash", part: Partitioner[rec]{Strategy: Hash, Hash: hashKey}, check: checkHash},
		{name: "range-given", part: Partitioner[rec]{Strategy: Range, Key: keyOf}, check: checkRange},
		{name: "range-sampled", part: Partitioner[rec]{Strategy: Range, Key: keyOf}, check: checkRange},
		{name: "broadcast", part: Partitioner[rec]{Strategy: Broadcast}, check: checkBroadcast},
		{name: "rebalance", part: Partitioner[rec]{Strategy: Rebalance}, check: checkRebalance},
		{name: "custom", part: Partitioner[rec]{Strategy: Custom, Custom: func(v *rec, n int) int { return int(uint64(v.Key) % uint64(n)) }}, check: checkCustom},
	}
}

// givenBounds returns n-1 ascending bounds over [-5000, 5000).
func givenBounds(n int) [][]byte {
	b := make([][]byte, n-1)
	for i := range b {
		b[i] = keyOf(nil, &rec{Key: int64(-5000 + 10000*(i+1)/n)})
	}
	return b
}

func TestPartitioners(t *testing.T) {
	codec := recCodec(t)
	shapes := [][2]int{{3, 2}, {2, 4}, {3, 3}, {1, 1}, {3, 1}} // 3 to 1: every record to one consumer
	dists := []keyDist{uniformKeys, zipfKeys, equalKeys, bigRecords}
	for _, pc := range partitionCases() {
		for _, mode := range []ExchangeMode{Pipelined, Blocking} {
			for _, bu := range budgets {
				for _, sh := range shapes {
					nProd, nCons := sh[0], sh[1]
					if pc.equal && nProd != nCons {
						continue
					}
					for i, dist := range dists {
						// every other distribution is emitted a batch at a time
						body, emit := sourceBody(in0(nProd, dist)), "emit"
						if i%2 == 1 {
							body, emit = batchSourceBody(in0(nProd, dist), 37), "emitbatch"
						}
						name := fmt.Sprintf("%s/%v/%s/%dto%d/%s/%s", pc.name, mode, bu.name, nProd, nCons, dist, emit)
						t.Run(name, func(t *testing.T) {
							in := in0(nProd, dist)
							part := pc.part
							if pc.name == "range-given" {
								part.Bounds = givenBounds(nCons)
							}
							env := newTestEnv(t, bu.opts)
							g := NewGraph()
							src := g.Vertex("source", nProd, body)
							col := newCollector(nCons)
							dst := g.Vertex("sink", nCons, col.body)
							Connect(g, src, dst, part, mode, codec)
							res, err := Execute(bg, g, env.options(Options{BatchSize: 100}))
							if err != nil {
								t.Fatal(err)
							}
							env.check(t)
							pc.check(t, in, col.got)
							checkCounts(t, res, in, col.got)
						})
					}
				}
			}
		}
	}
}

// in0 is TestPartitioners' input: 2000 records per producer of dist.
func in0(nProd int, dist keyDist) [][]rec { return genInput(nProd, 2000, dist, 1) }

// batchSourceBody emits input[subtask] on output 0 with EmitBatch, n
// records at a time.
func batchSourceBody(input [][]rec, n int) func(tc *TaskContext) error {
	return func(tc *TaskContext) error {
		w := Output[rec](tc, 0)
		for in := input[tc.Subtask]; len(in) > 0; {
			k := min(n, len(in))
			if err := w.EmitBatch(in[:k]); err != nil {
				return err
			}
			in = in[k:]
		}
		return nil
	}
}

// checkCounts asserts that the metrics count what went through.
func checkCounts(t *testing.T, res *Result, in [][]rec, got [][]rec) {
	t.Helper()
	src, _ := res.Vertex("source")
	sink, _ := res.Vertex("sink")
	var out int64
	for _, g := range got {
		out += int64(len(g))
	}
	if sink.Total().RecordsIn != out {
		t.Errorf("sink metrics: %d records in, collected %d", sink.Total().RecordsIn, out)
	}
	if src.Total().RecordsOut != out {
		t.Errorf("source metrics: %d records out, delivered %d", src.Total().RecordsOut, out)
	}
}

func checkForward(t *testing.T, in [][]rec, got [][]rec) {
	for c := range got {
		sameMultiset(t, fmt.Sprintf("consumer %d", c), got[c], in[c])
	}
}

func checkHash(t *testing.T, in [][]rec, got [][]rec) {
	sameMultiset(t, "all", flattenGot(got), flatten(in))
	owner := map[int64]int{}
	for c, g := range got {
		for _, r := range g {
			if o, ok := owner[r.Key]; ok && o != c {
				t.Fatalf("key %d on consumers %d and %d", r.Key, o, c)
			}
			owner[r.Key] = c
		}
	}
}

func checkRange(t *testing.T, in [][]rec, got [][]rec) {
	all := flattenGot(got)
	sameMultiset(t, "all", all, flatten(in))
	// consumer i's keys are all <= consumer i+1's: concatenating the locally
	// sorted partitions gives a sorted sequence
	var keys []int64
	for _, g := range got {
		local := make([]int64, len(g))
		for i, r := range g {
			local[i] = r.Key
		}
		slices.Sort(local)
		keys = append(keys, local...)
	}
	if !slices.IsSorted(keys) {
		t.Fatal("range partitions overlap")
	}
}

func checkBroadcast(t *testing.T, in [][]rec, got [][]rec) {
	for c := range got {
		sameMultiset(t, fmt.Sprintf("consumer %d", c), got[c], flatten(in))
	}
}

func checkRebalance(t *testing.T, in [][]rec, got [][]rec) {
	sameMultiset(t, "all", flattenGot(got), flatten(in))
	for p := range in {
		lo, hi := int(^uint(0)>>1), 0
		for _, g := range got {
			n := 0
			for _, r := range g {
				if int(r.Prod) == p {
					n++
				}
			}
			lo, hi = min(lo, n), max(hi, n)
		}
		if hi-lo > 1 {
			t.Fatalf("producer %d: consumers got between %d and %d records", p, lo, hi)
		}
	}
}

func checkCustom(t *testing.T, in [][]rec, got [][]rec) {
	sameMultiset(t, "all", flattenGot(got), flatten(in))
	for c, g := range got {
		for _, r := range g {
			if int(uint64(r.Key)%uint64(len(got))) != c {
				t.Fatalf("key %d on consumer %d", r.Key, c)
			}
		}
	}
}

func flattenGot(got [][]rec) []rec {
	var out []rec
	for _, g := range got {
		out = append(out, g...)
	}
	return out
}

func TestRangeIndex(t *testing.T) {
	b := newRangeBounds([][]byte{{2}, {4}, {4}, {7}})
	for _, tc := range []struct {
		key  byte
		want int
	}{{0, 0}, {2, 0}, {3, 1}, {4, 1}, {5, 3}, {7, 3}, {8, 4}} {
		if got := b.index([]byte{tc.key}); got != tc.want {
			t.Errorf("index(%d) = %d, want %d", tc.key, got, tc.want)
		}
	}
}

// TestRangeIndexPrefixes checks routing by prefix against a binary search with
// bytes.Compare alone, over keys that share their 8-byte prefixes, end inside
// them or have trailing zero bytes (which the prefix cannot tell from its
// padding).
func TestRangeIndexPrefixes(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	key := func() []byte {
		k := make([]byte, r.IntN(12))
		for i := range k {
			k[i] = []byte{0, 1, 'a', 0xff}[r.IntN(4)]
		}
		return k
	}
	for range 200 {
		keys := make([][]byte, 1+r.IntN(6))
		for i := range keys {
			keys[i] = key()
		}
		slices.SortFunc(keys, bytes.Compare)
		b := newRangeBounds(keys)
		for range 200 {
			k := key()
			want, _ := slices.BinarySearchFunc(keys, k, bytes.Compare) // the first i with k <= keys[i]
			if got := b.index(k); got != want {
				t.Fatalf("bounds %q: index(%q) = %d, want %d", keys, k, got, want)
			}
		}
	}
}

func TestBoundsFromSamples(t *testing.T) {
	// producer 0 saw 1000 records and sampled 10; producer 1 saw 10 and sampled 10:
	// producer 0's keys carry 100 times the weight
	var s0, s1 [][]byte
	for i := 0; i < 10; i++ {
		s0 = append(s0, []byte{byte(10 + i)})
		s1 = append(s1, []byte{byte(i)})
	}
	b := boundsFromSamples([][][]byte{s0, s1}, []int64{1000, 10}, 2)
	if len(b) != 1 || !bytes.Equal(b[0], []byte{14}) {
		t.Fatalf("bounds %v, want [[14]]", b)
	}
	empty := boundsFromSamples([][][]byte{nil, nil}, []int64{0, 0}, 3)
	if len(empty) != 2 {
		t.Fatalf("bounds %v for no keys", empty)
	}
}

// TestRangeSampledBalanced checks that sampled bounds split uniform keys
// roughly evenly (no consumer gets less than half its share).
func TestRangeSampledBalanced(t *testing.T) {
	in := genInput(3, 20000, uniformKeys, 3)
	env := newTestEnv(t, budgets[0].opts)
	g := NewGraph()
	src := g.Vertex("source", 3, sourceBody(in))
	col := newCollector(4)
	dst := g.Vertex("sink", 4, col.body)
	Connect(g, src, dst, Partitioner[rec]{Strategy: Range, Key: keyOf}, Pipelined, recCodec(t))
	if _, err := Execute(bg, g, env.options(Options{})); err != nil {
		t.Fatal(err)
	}
	env.check(t)
	for c, got := range col.got {
		if len(got) < 60000/4/2 {
			t.Errorf("consumer %d got %d of 60000 records", c, len(got))
		}
	}
}

// TestRangeView checks that a Range edge with View routes exactly as with Key
// alone: each consumer gets the keys between its bounds.
func TestRangeView(t *testing.T) {
	in := genInput(2, 5000, uniformKeys, 2)
	bounds := [][]byte{memory.AppendInt64(nil, -1000), memory.AppendInt64(nil, 2000)}
	for _, view := range []bool{false, true} {
		env := newTestEnv(t, budgets[0].opts)
		g := NewGraph()
		src := g.Vertex("source", 2, sourceBody(in))
		col := newCollector(3)
		dst := g.Vertex("sink", 3, col.body)
		p := Partitioner[rec]{Strategy: Range, Key: keyOf, Bounds: bounds}
		if view {
			p.View = func(v *rec) []byte { return memory.AppendInt64(nil, v.Key) }
		}
		Connect(g, src, dst, p, Pipelined, recCodec(t))
		if _, err := Execute(bg, g, env.options(Options{})); err != nil {
			t.Fatal(err)
		}
		env.check(t)
		total := 0
		for c, got := range col.got {
			total += len(got)
			if len(got) == 0 {
				t.Errorf("view=%v: consumer %d got nothing; the test's keys do not span the bounds", view, c)
			}
			for _, r := range got {
				lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
				if c > 0 {
					lo = []int64{-1000, 2000}[c-1]
				}
				if c < 2 {
					hi = []int64{-1000, 2000}[c]
				}
				if !(r.Key > lo && r.Key <= hi) && !(c == 0 && r.Key == lo) {
					t.Fatalf("view=%v: consumer %d got key %d outside (%d, %d]", view, c, r.Key, lo, hi)
				}
			}
		}
		if total != 10000 {
			t.Errorf("view=%v: %d records arrived, want 10000", view, total)
		}
	}
}

// TestCustomEmitBatch: EmitBatch on a Custom edge routes every record as
// the partitioner says, with CustomBatch (chunks of records across its
// chunk size) or Custom alone, and a partitioner out of range fails the
// task.
func TestCustomEmitBatch(t *testing.T) {
	input := genInput(2, 3000, uniformKeys, 1)
	batchBody := func(tc *TaskContext) error {
		w := Output[rec](tc, 0)
		in := input[tc.Subtask]
		for len(in) > 0 { // uneven slices, across the batch size and the chunk
			n := min(len(in), 700)
			if err := w.EmitBatch(in[:n]); err != nil {
				return err
			}
			in = in[n:]
		}
		return nil
	}
	byKey := func(v *rec, n int) int { return int(uint64(v.Key) % uint64(n)) }
	byKeys := func(vs []rec, n int, dst []int32) {
		for i := range vs {
			dst[i] = int32(byKey(&vs[i], n))
		}
	}
	for _, batch := range []bool{false, true} {
		part := Partitioner[rec]{Strategy: Custom, Custom: byKey}
		bad := Partitioner[rec]{Strategy: Custom, Custom: func(*rec, int) int { return -1 }}
		if batch {
			part.CustomBatch = byKeys
			bad.CustomBatch = func(vs []rec, _ int, dst []int32) {
				for i := range vs {
					dst[i] = 0
				}
				dst[len(vs)-1] = -1
			}
		}
		env := newTestEnv(t, budgets[0].opts)
		g := NewGraph()
		src := g.Vertex("source", 2, batchBody)
		coll := newCollector(3)
		dst := g.Vertex("sink", 3, coll.body)
		Connect(g, src, dst, part, Pipelined, nil)
		if _, err := Execute(bg, g, env.options(Options{})); err != nil {
			t.Fatal(err)
		}
		checkCustom(t, input, coll.got)
		env.check(t)

		env = newTestEnv(t, budgets[0].opts)
		g = NewGraph()
		src = g.Vertex("source", 2, batchBody)
		dst = g.Vertex("sink", 3, newCollector(3).body)
		Connect(g, src, dst, bad, Pipelined, nil)
		_, err := Execute(bg, g, env.options(Options{}))
		if err == nil || !strings.Contains(err.Error(), "custom partitioner returned -1 for 3 consumers") {
			t.Fatalf("batch=%v: got %v", batch, err)
		}
		env.check(t)
	}
}
