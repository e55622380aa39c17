package sortjoin

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weirdata/weir/memory"
)

// sortedByKey returns recs ordered by key, values of a key in input order.
func sortedByKey(recs []Record) []Record {
	s := slices.Clone(recs)
	slices.SortStableFunc(s, func(a, b Record) int { return bytes.Compare(a.Key, b.Key) })
	return s
}

// oracleGroup is one key and its values, found by a naive scan.
type oracleGroup struct {
	key  []byte
	vals [][]byte
}

func groupOracle(sorted []Record) []oracleGroup {
	var out []oracleGroup
	for _, r := range sorted {
		if n := len(out); n > 0 && bytes.Equal(out[n-1].key, r.Key) {
			out[n-1].vals = append(out[n-1].vals, r.Val)
			continue
		}
		out = append(out, oracleGroup{key: r.Key, vals: [][]byte{r.Val}})
	}
	return out
}

// groupInputs are the sorted inputs of the grouping tests.
func groupInputs(seed uint64) map[string][]Record {
	r := rand.New(rand.NewPCG(seed, 21))
	in := map[string][]Record{"empty": nil, "one": {{Key: []byte("k"), Val: []byte("v")}}}
	num := func(i int) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(i)) }
	var equal, zipf, unique, large []Record
	for i := range 3000 {
		equal = append(equal, Record{Key: []byte("same"), Val: num(i)})
	}
	z := rand.NewZipf(r, 1.3, 1, 1000)
	for i := range 5000 {
		zipf = append(zipf, Record{Key: memory.AppendUint64(nil, z.Uint64()), Val: num(i)})
	}
	for i := range 3000 {
		unique = append(unique, Record{Key: memory.AppendUint64(nil, r.Uint64()), Val: num(i)})
	}
	for i := range 60 {
		large = append(large, Record{Key: bytes.Repeat([]byte{byte(r.IntN(4))}, 5000), Val: randBytes(r, 6000+i)})
	}
	in["all-equal"], in["zipf"], in["unique"], in["larger-than-segment"] = equal, zipf, unique, large
	for k, v := range in {
		in[k] = sortedByKey(v)
	}
	return in
}

func TestGroupSortedMatchesOracle(t *testing.T) {
	// take says how many values of the i-th group the function consumes.
	takes := map[string]func(r *rand.Rand, n int) int{
		"all":    func(_ *rand.Rand, n int) int { return n },
		"none":   func(_ *rand.Rand, n int) int { return 0 },
		"first":  func(_ *rand.Rand, n int) int { return 1 },
		"random": func(r *rand.Rand, n int) int { return r.IntN(n + 1) },
	}
	for name, recs := range groupInputs(1) {
		want := groupOracle(recs)
		for tname, take := range takes {
			t.Run(name+"/"+tname, func(t *testing.T) {
				r := rand.New(rand.NewPCG(2, 2))
				var got []oracleGroup
				err := GroupSorted(context.Background(), SliceIterator(recs), func(key []byte, vals *GroupValues) error {
					g := oracleGroup{key: slices.Clone(key)}
					wantN := 0
					if len(got) < len(want) {
						wantN = len(want[len(got)].vals)
					}
					n := take(r, wantN)
					for range n {
						v, ok := vals.Next()
						if !ok {
							return fmt.Errorf("group %q ended after %d values", key, len(g.vals))
						}
						g.vals = append(g.vals, slices.Clone(v))
					}
					if n == wantN {
						if v, ok := vals.Next(); ok {
							return fmt.Errorf("group %q: extra value %x", key, v)
						}
						if _, ok := vals.Next(); ok {
							return errors.New("Next after the end returned a value")
						}
					}
					got = append(got, g)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("%d groups, want %d", len(got), len(want))
				}
				for i := range want {
					if !bytes.Equal(got[i].key, want[i].key) {
						t.Fatalf("group %d: key %x, want %x", i, got[i].key, want[i].key)
					}
					for j, v := range got[i].vals {
						if !bytes.Equal(v, want[i].vals[j]) {
							t.Fatalf("group %d value %d: %x, want %x", i, j, v, want[i].vals[j])
						}
					}
				}
			})
		}
	}
}

func TestGroupSortedErrors(t *testing.T) {
	recs := groupInputs(3)["zipf"]
	boom := errors.New("boom")
	calls := 0
	err := GroupSorted(context.Background(), SliceIterator(recs), func(key []byte, vals *GroupValues) error {
		if calls++; calls == 3 {
			return boom
		}
		return nil
	})
	if err != boom || calls != 3 {
		t.Fatalf("fn error: got %v after %d calls", err, calls)
	}

	// Out of order between groups, and inside a group the function skips.
	for _, bad := range [][]Record{
		{{Key: []byte("b")}, {Key: []byte("a")}},
		{{Key: []byte("a")}, {Key: []byte("c")}, {Key: []byte("c")}, {Key: []byte("b")}},
	} {
		err := GroupSorted(context.Background(), SliceIterator(bad), func([]byte, *GroupValues) error { return nil })
		if !errors.Is(err, ErrUnsortedInput) {
			t.Errorf("out of order: %v", err)
		}
		err = CombineSorted(context.Background(), SliceIterator(bad), minCombine, func(k, acc []byte) error { return nil })
		if !errors.Is(err, ErrUnsortedInput) {
			t.Errorf("CombineSorted out of order: %v", err)
		}
	}

	// The input's own error.
	inErr := errors.New("input broke")
	err = GroupSorted(context.Background(), &failingIter{Iterator: SliceIterator(recs), left: 100, err: inErr}, func([]byte, *GroupValues) error { return nil })
	if !errors.Is(err, inErr) {
		t.Errorf("input error: %v", err)
	}
	err = CombineSorted(context.Background(), &failingIter{Iterator: SliceIterator(recs), left: 100, err: inErr}, mergeCombine, func([]byte, []byte) error { return nil })
	if !errors.Is(err, inErr) {
		t.Errorf("CombineSorted input error: %v", err)
	}

	// emit's error and combine's error.
	n := 0
	err = CombineSorted(context.Background(), SliceIterator(recs), sumCombine, func([]byte, []byte) error {
		if n++; n == 2 {
			return boom
		}
		return nil
	})
	if err != boom || n != 2 {
		t.Errorf("emit error: %v after %d", err, n)
	}
	err = CombineSorted(context.Background(), SliceIterator(groupInputs(3)["all-equal"]), func(dst, a, b []byte) ([]byte, error) { return nil, boom }, func([]byte, []byte) error { return nil })
	if !errors.Is(err, boom) {
		t.Errorf("combine error: %v", err)
	}
}

// failingIter ends with err after left records.
type failingIter struct {
	Iterator
	left int
	err  error
}

func (f *failingIter) Next() ([]byte, []byte, bool) {
	if f.left == 0 {
		return nil, nil, false
	}
	f.left--
	return f.Iterator.Next()
}

func (f *failingIter) Err() error {
	if f.left == 0 {
		return f.err
	}
	return nil
}

func TestGroupSortedCancel(t *testing.T) {
	recs := groupInputs(4)["unique"]
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := GroupSorted(ctx, SliceIterator(recs), func([]byte, *GroupValues) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before: %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	groups := 0
	err := GroupSorted(ctx, SliceIterator(recs), func([]byte, *GroupValues) error {
		if groups++; groups == 10 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || groups >= len(recs) {
		t.Errorf("cancelled during: %v after %d of %d groups", err, groups, len(recs))
	}
	ctx, cancel = context.WithCancel(context.Background())
	groups = 0
	err = CombineSorted(ctx, SliceIterator(recs), sumCombine, func([]byte, []byte) error {
		if groups++; groups == 10 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || groups >= len(recs) {
		t.Errorf("CombineSorted cancelled during: %v after %d of %d groups", err, groups, len(recs))
	}
}

func TestCombineSortedMatchesOracle(t *testing.T) {
	inputs := aggInputs(5)
	for _, c := range aggCombines {
		for _, in := range inputs {
			t.Run(c.name+"/"+in.name, func(t *testing.T) {
				recs := sortedByKey(makeRecords(in.keys, c, 6))
				want := aggOracle(recs, c)
				got := map[string][]byte{}
				var prev []byte
				err := CombineSorted(context.Background(), SliceIterator(recs), c.combine, func(k, acc []byte) error {
					if prev != nil && bytes.Compare(prev, k) >= 0 {
						return fmt.Errorf("key %x after %x", k, prev)
					}
					prev = slices.Clone(k)
					got[string(k)] = slices.Clone(acc)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				checkGroups(t, got, want)
			})
		}
	}
}

// TestGroupAfterSorter groups the output of the external sorter under a budget
// that makes it spill: the sort-based aggregation pipeline end to end.
func TestGroupAfterSorter(t *testing.T) {
	c := aggCombines[2]
	for _, in := range aggInputs(8)[1:] {
		t.Run(in.name, func(t *testing.T) {
			recs := makeRecords(in.keys, c, 9)
			env := newSortEnv(t, memory.Options{SegmentSize: 4096, Budget: 8 * 4096}, testSpill)
			s := NewSorter(env.Env, SortOptions{Name: "group-sort"})
			defer s.Close()
			for _, r := range recs {
				if err := s.Add(r.Key, r.Val); err != nil {
					t.Fatal(err)
				}
			}
			it, err := s.Finish(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer it.Close()
			got := map[string][]byte{}
			err = GroupSorted(context.Background(), it, func(key []byte, vals *GroupValues) error {
				var acc []byte
				for v, ok := vals.Next(); ok; v, ok = vals.Next() {
					acc, _ = mergeCombine(nil, acc, v)
				}
				got[string(key)] = acc
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			checkGroups(t, got, aggOracle(recs, c))
			if err := it.Close(); err != nil {
				t.Fatal(err)
			}

			// CombineSorted on the sorter's output, whose slices die at each Next,
			// with a combine that returns the input's value itself.
			m := aggCombines[4] // min-alias
			recs = makeRecords(in.keys, m, 10)
			s = NewSorter(env.Env, SortOptions{Name: "combine-sort"})
			defer s.Close()
			for _, r := range recs {
				if err := s.Add(r.Key, r.Val); err != nil {
					t.Fatal(err)
				}
			}
			if it, err = s.Finish(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer it.Close()
			got = map[string][]byte{}
			err = CombineSorted(context.Background(), it, m.combine, func(k, acc []byte) error {
				got[string(k)] = slices.Clone(acc)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			checkGroups(t, got, aggOracle(recs, m))
			if err := it.Close(); err != nil {
				t.Fatal(err)
			}
			env.check(t)
		})
	}
}

// TestGroupAllocs proves that grouping and combining allocate nothing per record:
// a run over many records allocates as much as a run over a few.
func TestGroupAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under the race detector are not the program's")
	}
	recs := groupInputs(10)["zipf"]
	for _, tc := range []struct {
		name string
		run  func(in Iterator)
	}{
		{"GroupSorted", func(in Iterator) {
			_ = GroupSorted(context.Background(), in, func(_ []byte, vals *GroupValues) error {
				for _, ok := vals.Next(); ok; _, ok = vals.Next() {
				}
				return nil
			})
		}},
		{"CombineSorted", func(in Iterator) {
			_ = CombineSorted(context.Background(), in, sumCombine, func([]byte, []byte) error { return nil })
		}},
	} {
		it := &sliceIter{}
		run := func(n int) float64 {
			return testing.AllocsPerRun(20, func() {
				*it = sliceIter{recs: recs[:n]}
				tc.run(it)
			})
		}
		few, many := run(10), run(len(recs))
		if many > few {
			t.Errorf("%s: %.0f allocations for %d records, %.0f for 10", tc.name, many, len(recs), few)
		}
		if few > 4 {
			t.Errorf("%s: %.0f allocations per call", tc.name, few)
		}
	}
}
