package sortjoin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
	"github.com/weirdata/weir/spill"
)

// runMergeJoin sorts the inputs in Go, merge-joins them and returns the sorted rows.
func runMergeJoin(ctx context.Context, env resource.Env, left, right []Record, kind JoinKind) ([]string, error) {
	var c rowCollector
	err := MergeJoin(ctx, env, "mj", SliceIterator(sortedRecords(left)), SliceIterator(sortedRecords(right)), kind, c.emit)
	return c.sorted(), err
}

// TestMergeJoinMatchesOracle sweeps kind × budget × dataset.
func TestMergeJoinMatchesOracle(t *testing.T) {
	for _, d := range joinDatasets() {
		want := oracleAll(d.left, d.right)
		for _, b := range []joinBudget{joinBudgets[0], joinBudgets[2]} {
			for _, kind := range allJoinKinds {
				t.Run(fmt.Sprintf("%s/%s/%s", d.name, b.name, kind), func(t *testing.T) {
					e := newJoinEnv(t, b.mem)
					got, err := runMergeJoin(context.Background(), e.Env, d.left, d.right, kind)
					if err != nil {
						t.Fatal(err)
					}
					checkRows(t, got, want[kind])
					// A key group larger than the budget goes to disk; only the
					// kinds that pair records buffer groups.
					pairs := kind != Semi && kind != Anti
					if b.tiny && d.oneKey && pairs && !e.spilled() {
						t.Error("a key group larger than memory did not spill")
					}
					if !b.tiny && e.spilled() {
						t.Error("unlimited budget spilled")
					}
					e.check(t)
				})
			}
		}
	}
}

// TestMergeJoinHugeGroup joins a right key group many times larger than memory
// with left records of that key spread over several blocks, between other keys.
func TestMergeJoinHugeGroup(t *testing.T) {
	hot := uintKey(500)
	left := genRecords('L', 300, 300, func(i int) []byte {
		if i%3 == 0 {
			return hot
		}
		return uintKey(uint64(i))
	})
	right := genRecords('R', 400, 500, func(i int) []byte {
		if i%4 != 0 {
			return hot
		}
		return uintKey(uint64(1000 - i))
	})
	want := oracleAll(left, right)
	for _, kind := range allJoinKinds {
		t.Run(kind.String(), func(t *testing.T) {
			e := newJoinDiskEnv(t, joinTiny)
			got, err := runMergeJoin(context.Background(), e.Env, left, right, kind)
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, got, want[kind])
			if kind != Semi && kind != Anti && !e.spilled() {
				t.Error("group did not spill")
			}
			e.check(t)
		})
	}
}

// TestMergeJoinUnsorted checks that an order violation on either side is an error
// naming the side.
func TestMergeJoinUnsorted(t *testing.T) {
	sorted := sortedRecords(genRecords('S', 200, 16, func(i int) []byte { return uintKey(uint64(i / 2)) }))
	bad := sortedRecords(genRecords('B', 200, 16, func(i int) []byte { return uintKey(uint64(i / 3)) }))
	bad[150], bad[151] = bad[151], bad[150]
	bad[150].Key = uintKey(10) // smaller than its predecessor
	for _, side := range []Side{Left, Right} {
		for _, kind := range allJoinKinds {
			t.Run(side.String()+"/"+kind.String(), func(t *testing.T) {
				e := newJoinDiskEnv(t, joinTiny)
				left, right := sorted, bad
				if side == Left {
					left, right = bad, sorted
				}
				// Keep the other side alive past the violation.
				err := MergeJoin(context.Background(), e.Env, "unsorted", SliceIterator(left), SliceIterator(append(right, Record{Key: uintKey(1 << 40)})), kind,
					func(k, l, r []byte) error { return nil })
				if !errors.Is(err, ErrUnsortedInput) {
					t.Fatalf("err = %v, want ErrUnsortedInput", err)
				}
				if !strings.Contains(err.Error(), side.String()+" input") {
					t.Errorf("error does not name the %s side: %v", side, err)
				}
				e.check(t)
			})
		}
	}
}

// TestMergeJoinFaults fails spill operations while a group is spilled and replayed.
func TestMergeJoinFaults(t *testing.T) {
	hot := uintKey(1)
	left := genRecords('L', 60, 300, func(int) []byte { return hot })
	right := genRecords('R', 200, 300, func(int) []byte { return hot })
	for _, c := range []struct {
		op  spill.Op
		nth int
	}{{spill.OpCreate, 1}, {spill.OpWrite, 1}, {spill.OpWrite, 10}, {spill.OpSync, 1}, {spill.OpOpen, 1}, {spill.OpOpen, 2}, {spill.OpRead, 1}, {spill.OpRead, 50}, {spill.OpRemove, 1}} {
		t.Run(fmt.Sprintf("%s-%d", c.op, c.nth), func(t *testing.T) {
			e := newJoinDiskEnv(t, joinTiny)
			e.fault.FailNth(c.op, c.nth)
			_, err := runMergeJoin(context.Background(), e.Env, left, right, Inner)
			if !errors.Is(err, spill.ErrInjected) {
				t.Fatalf("err = %v, want the injected fault", err)
			}
			if !strings.Contains(err.Error(), c.op.String()) || !strings.Contains(err.Error(), "mj") {
				t.Errorf("error does not name the operation %q and the join: %v", c.op, err)
			}
			e.check(t)
		})
	}
}

// TestMergeJoinCancel cancels while streaming and while replaying a spilled group.
func TestMergeJoinCancel(t *testing.T) {
	hot := uintKey(1)
	cases := map[string][2][]Record{
		"streaming": {
			genRecords('L', 5000, 16, func(i int) []byte { return uintKey(uint64(i)) }),
			genRecords('R', 5000, 16, func(i int) []byte { return uintKey(uint64(i)) }),
		},
		"replay": {
			genRecords('L', 60, 300, func(int) []byte { return hot }),
			genRecords('R', 200, 300, func(int) []byte { return hot }),
		},
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			e := newJoinDiskEnv(t, joinTiny)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			n := 0
			err := MergeJoin(ctx, e.Env, "mj", SliceIterator(in[0]), SliceIterator(in[1]), FullOuter, func(k, l, r []byte) error {
				if n++; n == 100 {
					cancel()
				}
				return nil
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			e.check(t)
		})
	}
}

// TestMergeJoinParallel runs one merge join per hash partition, all at once,
// sharing one Manager and one spill FS.
func TestMergeJoinParallel(t *testing.T) {
	const n = 4
	for _, d := range joinDatasets() {
		if d.name != "all-equal" && d.name != "zipf" && d.name != "large-records" {
			continue
		}
		want := oracleAll(d.left, d.right)
		for _, kind := range allJoinKinds {
			t.Run(d.name+"/"+kind.String(), func(t *testing.T) {
				e := newJoinDiskEnv(t, memory.Options{SegmentSize: 4096, Budget: 8 * 4096})
				lp, rp := hashSplit(d.left, n), hashSplit(d.right, n)
				var c rowCollector
				var wg sync.WaitGroup
				errs := make([]error, n)
				for i := range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						errs[i] = MergeJoin(context.Background(), e.Env, fmt.Sprintf("mj%d", i),
							SliceIterator(sortedRecords(lp[i])), SliceIterator(sortedRecords(rp[i])), kind, c.emit)
					}()
				}
				wg.Wait()
				for i, err := range errs {
					if err != nil {
						t.Fatalf("join %d: %v", i, err)
					}
				}
				checkRows(t, c.sorted(), want[kind])
				e.check(t)
			})
		}
	}
}

// TestMergeJoinAllocs checks that merging allocates nothing per record.
func TestMergeJoinAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under the race detector are not the program's")
	}
	left := sortedRecords(genRecords('L', 40000, 16, func(i int) []byte { return uintKey(uint64(i / 2)) }))
	right := sortedRecords(genRecords('R', 40000, 16, func(i int) []byte { return uintKey(uint64(i/3 + 100)) }))
	for _, kind := range allJoinKinds {
		e := newJoinEnv(t, memory.Options{SegmentSize: 4096})
		emit := func(k, l, r []byte) error { return nil }
		allocs := func(n int) float64 {
			return testing.AllocsPerRun(5, func() {
				if err := MergeJoin(context.Background(), e.Env, "mj", SliceIterator(left[:n]), SliceIterator(right[:n]), kind, emit); err != nil {
					t.Fatal(err)
				}
			})
		}
		small, large := allocs(10000), allocs(40000)
		t.Logf("%s: %.0f allocs merging 10000 records a side, %.0f merging 40000", kind, small, large)
		if large > small+2 {
			t.Errorf("%s: %.0f allocs merging 10000 records a side, %.0f merging 40000", kind, small, large)
		}
		e.check(t)
	}
}

// TestMergeJoinErrors checks that errors of emit and of either input stop the join
// and are returned, with everything released.
func TestMergeJoinErrors(t *testing.T) {
	hot := uintKey(7)
	left := sortedRecords(genRecords('L', 400, 300, func(i int) []byte {
		if i%2 == 0 {
			return hot
		}
		return uintKey(uint64(i))
	}))
	right := sortedRecords(genRecords('R', 400, 300, func(i int) []byte {
		if i%3 == 0 {
			return hot
		}
		return uintKey(uint64(i + 1))
	}))
	stop := errors.New("stop")
	ats := []int{1, 50, 300}
	if testing.Short() { // the race run: the first record and the last
		ats = []int{1, 300}
	}
	for _, kind := range allJoinKinds {
		for _, at := range ats {
			t.Run(fmt.Sprintf("%s/emit-%d", kind, at), func(t *testing.T) {
				e := newJoinEnv(t, joinTiny)
				n := 0
				err := MergeJoin(context.Background(), e.Env, "mj", SliceIterator(left), SliceIterator(right), kind, func(k, l, r []byte) error {
					if n++; n == at {
						return stop
					}
					return nil
				})
				if want := len(oracleAll(left, right)[kind]); at <= want && !errors.Is(err, stop) || at > want && err != nil {
					t.Fatalf("err = %v after %d of %d rows", err, n, want)
				}
				e.check(t)
			})
			for _, side := range []Side{Left, Right} {
				t.Run(fmt.Sprintf("%s/%s-input-%d", kind, side, at), func(t *testing.T) {
					e := newJoinEnv(t, joinTiny)
					var l, r Iterator = SliceIterator(left), SliceIterator(right)
					if side == Left {
						l = &errIter{Iterator: l, n: at}
					} else {
						r = &errIter{Iterator: r, n: at}
					}
					err := MergeJoin(context.Background(), e.Env, "mj", l, r, kind, func(k, l, r []byte) error { return nil })
					// The input breaks before either side ends, so every kind reads
					// up to the break.
					if err == nil || !strings.Contains(err.Error(), "input broke") || !strings.Contains(err.Error(), side.String()+" input") {
						t.Fatalf("err = %v", err)
					}
					e.check(t)
				})
			}
		}
	}
}
