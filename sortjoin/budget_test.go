package sortjoin

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/spill"
)

// tightEnv returns an environment whose whole budget another operator holds,
// as under a tight budget shared with a plan's other operators, and the
// release of that holder. Spill blocks are sized for the budget.
func tightEnv(t *testing.T, budget int64) (*joinEnv, func()) {
	t.Helper()
	e := newJoinEnv(t, memory.Options{SegmentSize: 4 << 10, Budget: budget})
	e.Spill = spill.Options{}.ForBudget(budget)
	hog := e.mgr.NewReservation("other operators")
	if err := hog.Grow(budget); err != nil {
		t.Fatal(err)
	}
	return e, func() { _ = hog.Release() }
}

// TestTightBudgetSortRuns sorts with no memory left in the budget: runs are
// the manager's floor, not a record or two, so the files written stay few;
// the output is the input in key order and nothing is left behind.
func TestTightBudgetSortRuns(t *testing.T) {
	const budget = 4 << 20
	e, release := tightEnv(t, budget)
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 100_000
	recs := make([]Record, n)
	var size int64
	for i := range recs {
		recs[i] = Record{Key: memory.AppendUint64(nil, rng.Uint64()), Val: fmt.Appendf(nil, "value %d", i)}
		size += int64(len(recs[i].Key) + len(recs[i].Val))
	}
	got, st := sortAll(t, e.Env, SortOptions{Name: "tight", Async: true, Memory: 64 << 10}, recs)
	checkSorted(t, recs, got)
	// A run holds at least half the floor (Async halves it) less the index and
	// the writer; intermediate merges add a file per fan-in runs.
	runBytes := e.mgr.Floor()/2 - e.Spill.WriterMemory()
	bound := 3 * (size/runBytes + 1)
	created := int64(e.fault.Count(spill.OpCreate))
	t.Logf("%d bytes, %d runs, %d merge passes, %d files, bound %d", size, st.Runs, st.MergePasses, created, bound)
	if created == 0 || created > bound {
		t.Errorf("%d spill files for %d bytes under a floor of %d, want 1..%d", created, size, e.mgr.Floor(), bound)
	}
	release()
	e.check(t)
}

// TestTightBudgetHashJoin joins with no memory left in the budget: the result
// equals a map join's, partitions spill at the floor rather than a few records
// at a time, so the files written stay few, and nothing is left behind.
func TestTightBudgetHashJoin(t *testing.T) {
	const budget = 4 << 20
	e, release := tightEnv(t, budget)
	rng := rand.New(rand.NewPCG(3, 4))
	const n, keys = 40_000, 15_000
	gen := func(side byte) []Record {
		recs := make([]Record, n)
		for i := range recs {
			recs[i] = Record{Key: uintKey(rng.Uint64N(keys)), Val: joinVal(side, i, 24)}
		}
		return recs
	}
	left, right := gen('L'), gen('R')
	byKey := map[string][]int{}
	for k, r := range right {
		byKey[string(r.Key)] = append(byKey[string(r.Key)], k)
	}
	matches := make([][]int, len(left))
	rightMatched := make([]bool, len(right))
	for i, l := range left {
		matches[i] = byKey[string(l.Key)]
		for _, k := range matches[i] {
			rightMatched[k] = true
		}
	}
	for _, kind := range []JoinKind{Inner, FullOuter} {
		t.Run(kind.String(), func(t *testing.T) {
			before := e.fault.Count(spill.OpCreate)
			got, st, err := runHashJoin(context.Background(), e.Env, HashJoinOptions{Name: "tight", Build: Left}, left, right, kind)
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, got, oracleRows(left, right, matches, rightMatched, kind))
			created := e.fault.Count(spill.OpCreate) - before
			t.Logf("%d files, %+v", created, st)
			if st.SpilledPartitions == 0 {
				t.Errorf("nothing spilled with the budget held elsewhere: %+v", st)
			}
			if created > 32 {
				t.Errorf("%d spill files for %d+%d records, want at most 32", created, n, n)
			}
		})
	}
	release()
	e.check(t)
}

// TestTightBudgetAggregation sums by key with no memory left in the budget:
// the sums equal a map's, partitions spill at the floor, so the files written
// stay few, and nothing is left behind.
func TestTightBudgetAggregation(t *testing.T) {
	const budget = 4 << 20
	e, release := tightEnv(t, budget)
	rng := rand.New(rand.NewPCG(5, 6))
	const n, keys = 200_000, 60_000
	recs := make([]Record, n)
	want := map[string]uint64{}
	for i := range recs {
		k := uintKey(rng.Uint64N(keys))
		v := rng.Uint64N(1000)
		recs[i] = Record{Key: k, Val: binary.LittleEndian.AppendUint64(nil, v)}
		want[string(k)] += v
	}
	got, st := runFinal(t, e.Env, AggOptions{Name: "tight"}, sumCombine, recs)
	if len(got) != len(want) {
		t.Fatalf("%d groups, want %d", len(got), len(want))
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || le64(g) != w {
			t.Fatalf("group %x = %v, want %d", k, g, w)
		}
	}
	created := e.fault.Count(spill.OpCreate)
	t.Logf("%d files, %+v", created, st)
	if created == 0 || created > 64 {
		t.Errorf("%d spill files for %d records, want 1..64", created, n)
	}
	release()
	e.check(t)
}
