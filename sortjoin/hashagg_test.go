package sortjoin

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
	"github.com/weirdata/weir/spill"
)

// The hash aggregation tests run every input through every combine function under
// every budget, in both modes, and compare with oracles that never touch the
// operator's code: a Go map of sums, a map of sorted value lists, a map of minima.

// aggCombine is a combine function with its independent oracle.
type aggCombine struct {
	name    string
	combine CombineFunc
	// value makes the i-th input value of a record (from a random source).
	value func(r *rand.Rand) []byte
	// oracle reduces all values of one key, in any order.
	oracle func(vals [][]byte) []byte
}

func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// sumCombine adds little-endian int64s, writing into dst.
func sumCombine(dst, a, b []byte) ([]byte, error) {
	return binary.LittleEndian.AppendUint64(dst, le64(a)+le64(b)), nil
}

// sumInPlace adds b into a and returns a itself.
func sumInPlace(_, a, b []byte) ([]byte, error) {
	binary.LittleEndian.PutUint64(a, le64(a)+le64(b))
	return a, nil
}

// mergeCombine treats values as sorted lists of 8-byte big-endian numbers and merges
// them: the accumulator grows with every value (relocations, compaction, records
// larger than a segment). Merging an empty list returns a itself.
func mergeCombine(dst, a, b []byte) ([]byte, error) {
	if len(a)%8 != 0 || len(b)%8 != 0 {
		return nil, fmt.Errorf("merge: lengths %d and %d", len(a), len(b))
	}
	if len(b) == 0 {
		return a, nil // an empty list changes nothing: keep a as it is
	}
	for len(a) > 0 && len(b) > 0 {
		if bytes.Compare(a[:8], b[:8]) <= 0 {
			dst, a = append(dst, a[:8]...), a[8:]
		} else {
			dst, b = append(dst, b[:8]...), b[8:]
		}
	}
	dst = append(dst, a...)
	return append(dst, b...), nil
}

// lessByLen orders values by (length, bytes).
func lessByLen(a, b []byte) bool {
	return len(a) < len(b) || len(a) == len(b) && bytes.Compare(a, b) < 0
}

// minCombine keeps the smaller value by (length, bytes): a itself when a wins, else
// a copy of b in dst. Accumulators shrink and change length.
func minCombine(dst, a, b []byte) ([]byte, error) {
	if !lessByLen(b, a) {
		return a, nil
	}
	return append(dst, b...), nil
}

// minAliasCombine is minCombine returning the winner as it is, a or b: the result
// may be the caller's value.
func minAliasCombine(_, a, b []byte) ([]byte, error) {
	if !lessByLen(b, a) {
		return a, nil
	}
	return b, nil
}

func minOracle(vals [][]byte) []byte {
	m := vals[0]
	for _, v := range vals[1:] {
		if lessByLen(v, m) {
			m = v
		}
	}
	return m
}

var aggCombines = []aggCombine{
	{
		name:    "sum",
		combine: sumCombine,
		value:   func(r *rand.Rand) []byte { return binary.LittleEndian.AppendUint64(nil, r.Uint64N(1000)) },
		oracle: func(vals [][]byte) []byte {
			var s uint64
			for _, v := range vals {
				s += le64(v)
			}
			return binary.LittleEndian.AppendUint64(nil, s)
		},
	},
	{
		name:    "sum-in-place",
		combine: sumInPlace,
		value:   func(r *rand.Rand) []byte { return binary.LittleEndian.AppendUint64(nil, r.Uint64()) },
		oracle: func(vals [][]byte) []byte {
			var s uint64
			for _, v := range vals {
				s += le64(v)
			}
			return binary.LittleEndian.AppendUint64(nil, s)
		},
	},
	{
		name:    "merge",
		combine: mergeCombine,
		value: func(r *rand.Rand) []byte {
			if r.IntN(4) == 0 {
				return []byte{}
			}
			return binary.BigEndian.AppendUint64(nil, r.Uint64())
		},
		oracle: func(vals [][]byte) []byte {
			var items [][]byte // a value may be a partial aggregate: a list itself
			for _, v := range vals {
				for ; len(v) > 0; v = v[8:] {
					items = append(items, v[:8])
				}
			}
			slices.SortFunc(items, bytes.Compare)
			return bytes.Join(items, nil)
		},
	},
	{
		name:    "min",
		combine: minCombine,
		value:   func(r *rand.Rand) []byte { return randBytes(r, 1+r.IntN(40)) },
		oracle:  minOracle,
	},
	{
		name:    "min-alias",
		combine: minAliasCombine,
		value:   func(r *rand.Rand) []byte { return randBytes(r, 1+r.IntN(40)) },
		oracle:  minOracle,
	},
}

// aggInput is a named list of keys; values come from the combine under test.
type aggInput struct {
	name string
	keys [][]byte
	// spills: the input holds enough distinct data to overflow a tiny budget
	spills bool
}

func aggInputs(seed uint64) []aggInput {
	r := rand.New(rand.NewPCG(seed, 11))
	var in []aggInput
	in = append(in, aggInput{name: "empty"})

	hot := make([][]byte, 3000)
	for i := range hot {
		hot[i] = memory.AppendString(nil, "the one hot key")
	}
	in = append(in, aggInput{name: "one-key", keys: hot})

	zipf := rand.NewZipf(r, 1.2, 1, 20000)
	skewed := make([][]byte, 8000)
	for i := range skewed {
		skewed[i] = memory.AppendUint64(nil, zipf.Uint64())
	}
	in = append(in, aggInput{name: "zipf", keys: skewed, spills: true})

	unique := make([][]byte, 6000)
	for i, p := range r.Perm(len(unique)) {
		unique[i] = memory.AppendString(nil, fmt.Sprintf("key-%07d", p))
	}
	in = append(in, aggInput{name: "unique", keys: unique, spills: true})

	// Keys larger than a 4 KiB segment, mixed with small ones.
	var big [][]byte
	for i := range 12 {
		big = append(big, append(bytes.Repeat([]byte{byte('A' + i)}, 4500+300*i), byte(i)))
	}
	large := make([][]byte, 300)
	for i := range large {
		if i%3 == 0 {
			large[i] = big[r.IntN(len(big))]
		} else {
			large[i] = memory.AppendUint64(nil, r.Uint64N(300))
		}
	}
	in = append(in, aggInput{name: "larger-than-segment", keys: large, spills: true})
	return in
}

// makeRecords pairs keys with values drawn for the combine.
func makeRecords(keys [][]byte, c aggCombine, seed uint64) []Record {
	r := rand.New(rand.NewPCG(seed, 13))
	recs := make([]Record, len(keys))
	for i, k := range keys {
		recs[i] = Record{Key: k, Val: c.value(r)}
	}
	return recs
}

// aggOracle groups recs in a map and reduces each group with the oracle.
func aggOracle(recs []Record, c aggCombine) map[string][]byte {
	groups := map[string][][]byte{}
	for _, r := range recs {
		groups[string(r.Key)] = append(groups[string(r.Key)], r.Val)
	}
	out := make(map[string][]byte, len(groups))
	for k, vals := range groups {
		out[k] = c.oracle(vals)
	}
	return out
}

// checkGroups compares an aggregation result with the oracle.
func checkGroups(t testing.TB, got, want map[string][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d groups, want %d", len(got), len(want))
	}
	bad := 0
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("key %.40q missing", k)
		case !bytes.Equal(g, w):
			t.Errorf("key %.40q: got %d bytes %.32x, want %d bytes %.32x", k, len(g), g, len(w), w)
		default:
			continue
		}
		if bad++; bad > 5 {
			t.Fatal("too many differences")
		}
	}
}

// drainGroups reads (key, acc) pairs from it, failing on a key seen twice.
func drainGroups(t testing.TB, it Iterator) (map[string][]byte, error) {
	t.Helper()
	out := map[string][]byte{}
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		if _, dup := out[string(k)]; dup {
			t.Fatalf("key %.40q emitted twice", k)
		}
		out[string(k)] = slices.Clone(v)
	}
	return out, it.Err()
}

// runFinal aggregates recs in Final mode and returns the groups and stats.
func runFinal(t testing.TB, env resource.Env, opts AggOptions, c CombineFunc, recs []Record) (map[string][]byte, AggStats) {
	t.Helper()
	a := NewHashAggregator(env, opts, c)
	defer a.Close()
	for _, r := range recs {
		if err := a.Add(r.Key, r.Val); err != nil {
			t.Fatalf("Add: %v", err)
		}
	}
	it, err := a.Finish(context.Background())
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	got, err := drainGroups(t, it)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	if err := it.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return got, a.Stats()
}

// runPartial aggregates recs in Partial mode and returns every flushed partial.
func runPartial(t testing.TB, env resource.Env, opts AggOptions, c CombineFunc, recs []Record) ([]Record, AggStats) {
	t.Helper()
	var partials []Record
	opts.Mode = Partial
	opts.Flush = func(k, acc []byte) error {
		partials = append(partials, Record{Key: slices.Clone(k), Val: slices.Clone(acc)})
		return nil
	}
	a := NewHashAggregator(env, opts, c)
	defer a.Close()
	for _, r := range recs {
		if err := a.Add(r.Key, r.Val); err != nil {
			t.Fatalf("Add: %v", err)
		}
	}
	it, err := a.Finish(context.Background())
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	if _, _, ok := it.Next(); ok {
		t.Fatal("Partial Finish returned a non-empty iterator")
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return partials, a.Stats()
}

// memSortEnv is sortEnv on an in-memory file system, for the large sweeps: the
// same checks, without a system call per spill file.
type memSortEnv struct {
	resource.Env
	fs *spill.MemFS
}

func newMemSortEnv(mo memory.Options) memSortEnv {
	fs := spill.NewMemFS()
	return memSortEnv{Env: resource.Env{Memory: memory.MustNewManager(mo), FS: fs, Spill: testSpill}, fs: fs}
}

// check asserts that every reservation was released and every spill file removed.
func (e memSortEnv) check(t testing.TB) {
	t.Helper()
	if err := e.Memory.Close(); err != nil {
		t.Errorf("manager: %v", err)
	}
	if files := e.fs.Files(); len(files) > 0 {
		t.Errorf("%d spill files left behind: %v", len(files), files)
	}
}

// aggBudget is one memory setting of the sweep.
type aggBudget struct {
	name   string
	mem    memory.Options
	spill  bool // inputs marked spills must spill under it
	rehash bool // and, given MaxRecursion, be re-aggregated in a hash table
	slow   bool // everything goes through many small sorts: run two combines only
}

var aggBudgets = []aggBudget{
	{name: "unlimited", mem: memory.Options{}},
	{name: "medium", mem: memory.Options{SegmentSize: 4096, Budget: 48 * 4096}},
	{name: "small", mem: memory.Options{SegmentSize: 4096, Budget: 12 * 4096}, spill: true, rehash: true},
	{name: "tiny", mem: memory.Options{SegmentSize: 4096, Budget: 4 * 4096}, spill: true},
	{name: "below-one-segment", mem: memory.Options{SegmentSize: 4096, Budget: 1000}, spill: true, slow: true},
}

func TestHashAggFinalMatchesOracle(t *testing.T) {
	inputs := aggInputs(1)
	for _, b := range aggBudgets {
		if testing.Short() && b.name == "medium" {
			continue // the race run: the budgets that do not spill and that do
		}
		for _, c := range aggCombines {
			if b.slow && c.name != "sum" && c.name != "merge" {
				continue
			}
			for _, in := range inputs {
				recs := makeRecords(in.keys, c, 2)
				want := aggOracle(recs, c)
				for i, rec := range []int{-1, 1, 3} {
					parts := []int{0, 8, 0}[i] // adaptive, or more than the budget holds
					if !b.spill && rec != 3 {
						continue // nothing spills: MaxRecursion does not matter
					}
					name := fmt.Sprintf("%s/%s/%s/rec%d", b.name, c.name, in.name, rec)
					t.Run(name, func(t *testing.T) {
						env := newMemSortEnv(b.mem)
						got, st := runFinal(t, env.Env, AggOptions{Name: "agg", MaxRecursion: rec, Partitions: parts}, c.combine, recs)
						checkGroups(t, got, want)
						if st.Groups != int64(len(want)) || st.Records != int64(len(recs)) {
							t.Errorf("stats %+v: want %d groups of %d records", st, len(want), len(recs))
						}
						if b.spill && in.spills {
							if st.SpilledPartitions == 0 || st.BytesSpilled == 0 {
								t.Errorf("nothing spilled: %+v", st)
							}
							if rec < 0 && st.SortedPartitions == 0 {
								t.Errorf("MaxRecursion -1 but no partition sorted: %+v", st)
							}
							if rec < 0 && st.RehashedPartitions != 0 {
								t.Errorf("MaxRecursion -1 but partitions re-hashed: %+v", st)
							}
							if rec > 0 && b.rehash && st.RehashedPartitions == 0 {
								t.Errorf("MaxRecursion %d but no partition re-aggregated: %+v", rec, st)
							}
						}
						if b.mem.Budget == 0 && st.SpilledPartitions != 0 {
							t.Errorf("spilled without a budget: %+v", st)
						}
						env.check(t)
					})
				}
			}
		}
	}
}

// TestHashAggHotKeyGrowing is one key whose accumulator outgrows the budget: the
// partition cannot shrink by re-hashing and must go to the sort fallback at once.
func TestHashAggHotKeyGrowing(t *testing.T) {
	c := aggCombines[2] // merge: the accumulator is every value
	keys := make([][]byte, 10000)
	for i := range keys {
		keys[i] = []byte("hot")
	}
	recs := makeRecords(keys, c, 3)
	want := aggOracle(recs, c)
	for _, rec := range []int{-1, 1, 4} {
		t.Run(fmt.Sprint("rec", rec), func(t *testing.T) {
			// 80 KB of accumulator against 48 KB of memory: enough to re-hash.
			env := newMemSortEnv(memory.Options{SegmentSize: 4096, Budget: 12 * 4096})
			got, st := runFinal(t, env.Env, AggOptions{MaxRecursion: rec}, c.combine, recs)
			checkGroups(t, got, want)
			if st.SortedPartitions != 1 || st.RehashedPartitions != 0 || st.Levels != 1 {
				t.Errorf("want the one-key partition sorted at once, not re-hashed: %+v", st)
			}
			env.check(t)
		})
	}
}

// TestHashAggCompaction grows accumulators with enough memory that partitions are
// compacted rather than spilled.
func TestHashAggCompaction(t *testing.T) {
	c := aggCombines[2]
	r := rand.New(rand.NewPCG(5, 5))
	keys := make([][]byte, 20000)
	for i := range keys {
		keys[i] = memory.AppendUint64(nil, r.Uint64N(200))
	}
	recs := makeRecords(keys, c, 6)
	want := aggOracle(recs, c)
	for _, b := range []aggBudget{{name: "unlimited"}, {name: "tight", mem: memory.Options{SegmentSize: 4096, Budget: 200 * 4096}}} {
		t.Run(b.name, func(t *testing.T) {
			env := newMemSortEnv(b.mem)
			got, st := runFinal(t, env.Env, AggOptions{Partitions: 4}, c.combine, recs)
			checkGroups(t, got, want)
			if st.Compactions == 0 {
				t.Errorf("no compaction: %+v", st)
			}
			if peak := env.Memory.Peak(); b.mem.Budget > 0 && peak > b.mem.Budget+64<<10 {
				t.Errorf("peak %d far above the budget %d", peak, b.mem.Budget)
			}
			env.check(t)
		})
	}
}

func TestHashAggPartialMatchesOracle(t *testing.T) {
	inputs := aggInputs(7)
	for _, b := range aggBudgets {
		for _, c := range aggCombines {
			for _, in := range inputs {
				recs := makeRecords(in.keys, c, 8)
				want := aggOracle(recs, c)
				t.Run(fmt.Sprintf("%s/%s/%s", b.name, c.name, in.name), func(t *testing.T) {
					env := newMemSortEnv(b.mem)
					partials, st := runPartial(t, env.Env, AggOptions{Name: "combiner"}, c.combine, recs)
					// The final phase of the oracle: reduce the partials per key.
					checkGroups(t, aggOracle(partials, c), want)
					if st.Groups != int64(len(partials)) || st.SpilledPartitions != 0 {
						t.Errorf("stats %+v for %d partials", st, len(partials))
					}
					if b.spill && in.spills && st.Flushes < 2 {
						t.Errorf("a tiny budget flushed only %d times", st.Flushes)
					}
					if b.mem.Budget == 0 && len(partials) != len(want) {
						t.Errorf("without a budget: %d partials for %d keys", len(partials), len(want))
					}
					env.check(t)
				})
			}
		}
	}
}

// TestHashAggPartialThenFinal chains a combiner into a final aggregation, the way a
// plan runs them.
func TestHashAggPartialThenFinal(t *testing.T) {
	c := aggCombines[0]
	recs := makeRecords(aggInputs(9)[2].keys, c, 10)
	env := newSortEnv(t, memory.Options{SegmentSize: 4096, Budget: 8 * 4096}, testSpill)
	final := NewHashAggregator(env.Env, AggOptions{Name: "final", MaxRecursion: 2}, c.combine)
	defer final.Close()
	partial := NewHashAggregator(env.Env, AggOptions{Name: "partial", Mode: Partial, Flush: final.Add}, c.combine)
	defer partial.Close()
	for _, r := range recs {
		if err := partial.Add(r.Key, r.Val); err != nil {
			t.Fatal(err)
		}
	}
	it, err := partial.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	it.Close()
	out, err := final.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got, err := drainGroups(t, out)
	if err != nil {
		t.Fatal(err)
	}
	out.Close()
	checkGroups(t, got, aggOracle(recs, c))
	if partial.Stats().Flushes < 2 {
		t.Errorf("the combiner never ran out of memory: %+v", partial.Stats())
	}
	env.check(t)
}

// TestHashAggParallel runs several aggregators at once on hash partitions of the
// input, sharing one manager and one spill directory.
func TestHashAggParallel(t *testing.T) {
	const workers = 4
	for _, c := range []aggCombine{aggCombines[0], aggCombines[2]} {
		for _, b := range aggBudgets[:3] {
			t.Run(c.name+"/"+b.name, func(t *testing.T) {
				recs := makeRecords(aggInputs(12)[2].keys, c, 13)
				want := aggOracle(recs, c)
				mem := b.mem
				if mem.Budget > 0 {
					mem.Budget *= workers
				}
				env := newSortEnv(t, mem, testSpill)
				var shards [workers][]Record
				for _, r := range recs {
					w := memory.Hash(r.Key, 77) % workers
					shards[w] = append(shards[w], r)
				}
				var wg sync.WaitGroup
				results := make([]map[string][]byte, workers)
				errs := make([]error, workers)
				for w := range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						results[w], errs[w] = aggregateShard(env.Env, fmt.Sprint("agg", w), c.combine, shards[w])
					}()
				}
				wg.Wait()
				got := map[string][]byte{}
				for w := range workers {
					if errs[w] != nil {
						t.Fatalf("worker %d: %v", w, errs[w])
					}
					for k, v := range results[w] {
						if _, dup := got[k]; dup {
							t.Fatalf("key %q from two workers", k)
						}
						got[k] = v
					}
				}
				checkGroups(t, got, want)
				env.check(t)
			})
		}
	}
}

// aggregateShard is runFinal for a goroutine: errors instead of t.Fatal.
func aggregateShard(env resource.Env, name string, c CombineFunc, recs []Record) (map[string][]byte, error) {
	a := NewHashAggregator(env, AggOptions{Name: name, MaxRecursion: 1}, c)
	defer a.Close()
	for _, r := range recs {
		if err := a.Add(r.Key, r.Val); err != nil {
			return nil, err
		}
	}
	it, err := a.Finish(context.Background())
	if err != nil {
		return nil, err
	}
	defer it.Close()
	out := map[string][]byte{}
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		if _, dup := out[string(k)]; dup {
			return nil, fmt.Errorf("key %q emitted twice", k)
		}
		out[string(k)] = slices.Clone(v)
	}
	return out, it.Err()
}

// TestHashAggFaults fails one spill file operation at a time: the error names the
// operation and wraps spill.ErrInjected, and nothing is left in memory or on disk.
func TestHashAggFaults(t *testing.T) {
	c := aggCombines[0]
	recs := makeRecords(aggInputs(14)[2].keys, c, 15)
	for _, op := range []spill.Op{spill.OpCreate, spill.OpWrite, spill.OpSync, spill.OpOpen, spill.OpRead, spill.OpRemove} {
		for _, nth := range []int{1, 3} {
			for _, rec := range []int{-1, 1} {
				t.Run(fmt.Sprintf("%s/%d/rec%d", op, nth, rec), func(t *testing.T) {
					env := newSortEnv(t, memory.Options{SegmentSize: 4096, Budget: 4 * 4096}, testSpill)
					fault := spill.NewFaultFS(env.FS)
					fault.FailNth(op, nth)
					e := env.Env
					e.FS = fault
					err := aggregateErr(e, AggOptions{MaxRecursion: rec}, c.combine, recs)
					if err == nil {
						t.Fatalf("no error after %d %s operations", fault.Count(op), op)
					}
					if !errors.Is(err, spill.ErrInjected) || !strings.Contains(err.Error(), op.String()) || !strings.Contains(err.Error(), "hashagg") {
						t.Errorf("error %q does not wrap the injected %s fault", err, op)
					}
					env.check(t)
				})
			}
		}
	}
}

// aggregateErr runs an aggregation to its end and returns the first error.
func aggregateErr(env resource.Env, opts AggOptions, c CombineFunc, recs []Record) error {
	a := NewHashAggregator(env, opts, c)
	defer a.Close()
	for _, r := range recs {
		if err := a.Add(r.Key, r.Val); err != nil {
			return err
		}
	}
	it, err := a.Finish(context.Background())
	if err != nil {
		return err
	}
	defer it.Close()
	for {
		if _, _, ok := it.Next(); !ok {
			return it.Err()
		}
	}
}

func TestHashAggCancel(t *testing.T) {
	c := aggCombines[0]
	recs := makeRecords(aggInputs(16)[3].keys, c, 17)
	for _, b := range aggBudgets[:3] {
		for _, after := range []int{0, 1, 3000} {
			t.Run(fmt.Sprintf("%s/after%d", b.name, after), func(t *testing.T) {
				env := newSortEnv(t, b.mem, testSpill)
				a := NewHashAggregator(env.Env, AggOptions{MaxRecursion: 1}, c.combine)
				defer a.Close()
				for _, r := range recs {
					if err := a.Add(r.Key, r.Val); err != nil {
						t.Fatal(err)
					}
				}
				ctx, cancel := context.WithCancel(context.Background())
				if after == 0 {
					cancel()
					if _, err := a.Finish(ctx); !errors.Is(err, context.Canceled) {
						t.Fatalf("Finish with a cancelled context: %v", err)
					}
					env.check(t)
					return
				}
				it, err := a.Finish(ctx)
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for {
					if n == after {
						cancel()
					}
					if _, _, ok := it.Next(); !ok {
						break
					}
					n++
				}
				cancel()
				if !errors.Is(it.Err(), context.Canceled) {
					t.Fatalf("after %d of %d groups: err %v", n, len(aggOracle(recs, c)), it.Err())
				}
				if n >= len(recs) {
					t.Fatalf("cancellation ignored: %d groups", n)
				}
				if err := it.Close(); err != nil {
					t.Fatal(err)
				}
				env.check(t)
			})
		}
	}
}

func TestHashAggCombineError(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	failing := func(dst, a, b []byte) ([]byte, error) {
		if calls++; calls == 500 {
			return nil, boom
		}
		return sumCombine(dst, a, b)
	}
	recs := makeRecords(aggInputs(18)[2].keys, aggCombines[0], 19)
	env := newSortEnv(t, memory.Options{SegmentSize: 4096, Budget: 4 * 4096}, testSpill)
	err := aggregateErr(env.Env, AggOptions{Name: "failing"}, failing, recs)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "failing") {
		t.Fatalf("got %v", err)
	}
	env.check(t)

	env = newSortEnv(t, memory.Options{}, testSpill)
	flushErr := errors.New("downstream full")
	a := NewHashAggregator(env.Env, AggOptions{Mode: Partial, Flush: func(k, v []byte) error { return flushErr }}, sumCombine)
	a.Add([]byte("k"), make([]byte, 8))
	if _, err := a.Finish(context.Background()); !errors.Is(err, flushErr) {
		t.Fatalf("Flush error: %v", err)
	}
	if err := a.Add([]byte("k"), make([]byte, 8)); !errors.Is(err, flushErr) {
		t.Fatalf("Add after a failure: %v", err)
	}
	a.Close()
	env.check(t)
}

func TestHashAggContract(t *testing.T) {
	env := newSortEnv(t, memory.Options{}, testSpill)
	if err := NewHashAggregator(env.Env, AggOptions{}, nil).Add(nil, nil); err == nil {
		t.Error("nil combine accepted")
	}
	p := NewHashAggregator(env.Env, AggOptions{Mode: Partial}, sumCombine)
	if _, err := p.Finish(context.Background()); err == nil {
		t.Error("Partial mode without Flush accepted")
	}
	p.Close()

	a := NewHashAggregator(env.Env, AggOptions{}, sumCombine)
	if err := a.Add([]byte("k"), make([]byte, 8)); err != nil {
		t.Fatal(err)
	}
	it, err := a.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Add([]byte("k"), make([]byte, 8)); err == nil {
		t.Error("Add after Finish accepted")
	}
	if _, err := a.Finish(context.Background()); err == nil {
		t.Error("second Finish accepted")
	}
	if _, _, ok := it.Next(); !ok {
		t.Fatal("lost the group")
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if err := it.Close(); err != nil {
		t.Error("second iterator Close:", err)
	}
	if err := a.Close(); err != nil {
		t.Error("Close after the iterator's:", err)
	}
	// Closing before Finish, with spilled partitions, removes everything.
	m := memory.MustNewManager(memory.Options{SegmentSize: 4096, Budget: 4096})
	b := NewHashAggregator(resource.Env{Memory: m, FS: env.FS, Spill: testSpill}, AggOptions{}, sumCombine)
	for i := range 5000 {
		if err := b.Add(memory.AppendUint64(nil, uint64(i)), make([]byte, 8)); err != nil {
			t.Fatal(err)
		}
	}
	if b.Stats().SpilledPartitions == 0 {
		t.Error("expected spilled partitions")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Error(err)
	}
	env.check(t)
}

// TestHashAggAddAllocs proves that Add allocates nothing in the steady state, for a
// combine writing into dst and for one modifying the accumulator in place.
func TestHashAggAddAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under the race detector are not the program's")
	}
	for _, c := range []CombineFunc{sumCombine, sumInPlace} {
		env := newSortEnv(t, memory.Options{}, testSpill)
		a := NewHashAggregator(env.Env, AggOptions{}, c)
		keys := make([][]byte, 1000)
		val := binary.LittleEndian.AppendUint64(nil, 1)
		for i := range keys {
			keys[i] = memory.AppendUint64(nil, uint64(i)*7919)
			if err := a.Add(keys[i], val); err != nil {
				t.Fatal(err)
			}
		}
		allocs := testing.AllocsPerRun(20, func() {
			for _, k := range keys {
				if err := a.Add(k, val); err != nil {
					t.Fatal(err)
				}
			}
		})
		if allocs != 0 {
			t.Errorf("Add allocates %.1f times per %d records", allocs, len(keys))
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		env.check(t)
	}
}

// TestAggPartRemove checks backward-shift deletion from the linear-probing index:
// after any removals every remaining entry is still reachable from its home slot
// before an empty one, also across the wrap-around at the end of the table.
func TestAggPartRemove(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 31))
	for trial := range 2000 {
		p := &aggPart{slots: make([]aggSlot, 16), mask: 15}
		live := map[uint64]uint64{} // off -> hash
		for n := 1 + r.IntN(14); len(live) < n; {
			h := r.Uint64N(4)<<60 | uint64(12+r.IntN(8))&15 // homes crowd around the wrap
			off := uint64(len(live) + 1)
			j := h & p.mask
			for p.slots[j].off != 0 {
				j = (j + 1) & p.mask
			}
			p.slots[j] = aggSlot{hash: h, off: off}
			live[off] = h
		}
		for len(live) > 0 {
			// remove a random live entry
			var i uint64
			for {
				i = r.Uint64N(16)
				if p.slots[i].off != 0 {
					break
				}
			}
			delete(live, p.slots[i].off)
			p.remove(i)
			for off, h := range live {
				j := h & p.mask
				for p.slots[j].off != off {
					if p.slots[j].off == 0 {
						t.Fatalf("trial %d: entry %d (home %d) unreachable after a removal", trial, off, h&p.mask)
					}
					j = (j + 1) & p.mask
				}
			}
			n := 0
			for _, s := range p.slots {
				if s.off != 0 {
					n++
				}
			}
			if n != len(live) {
				t.Fatalf("trial %d: %d entries in the table, want %d", trial, n, len(live))
			}
		}
	}
}
