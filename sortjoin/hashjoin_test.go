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

// runHashJoin runs one hash join over in-memory inputs and returns its sorted rows.
func runHashJoin(ctx context.Context, env resource.Env, opts HashJoinOptions, left, right []Record, kind JoinKind) ([]string, JoinStats, error) {
	var c rowCollector
	st, err := HashJoin(ctx, env, opts, SliceIterator(left), SliceIterator(right), kind, c.emit)
	return c.sorted(), st, err
}

// TestHashJoinMatchesOracle sweeps kind × build side × budget × dataset.
func TestHashJoinMatchesOracle(t *testing.T) {
	kinds := allJoinKinds
	if testing.Short() { // the race run: the kinds that keep both sides' unmatched rows
		kinds = []JoinKind{Inner, FullOuter, Anti}
	}
	for _, d := range joinDatasets() {
		want := oracleAll(d.left, d.right)
		for _, b := range joinBudgets {
			for _, build := range []Side{Left, Right} {
				for _, kind := range kinds {
					name := fmt.Sprintf("%s/%s/build-%s/%s", d.name, b.name, build, kind)
					t.Run(name, func(t *testing.T) {
						e := newJoinEnv(t, b.mem)
						opts := HashJoinOptions{Name: "hj", Build: build, Partitions: b.partitions, MaxRecursion: b.maxRecursion, Seed: 7}
						got, st, err := runHashJoin(context.Background(), e.Env, opts, d.left, d.right, kind)
						if err != nil {
							t.Fatal(err)
						}
						checkRows(t, got, want[kind])
						checkHashStats(t, d, b, opts.EnsureDefaults(), st)
						e.check(t)
					})
				}
			}
		}
	}
}

// checkHashStats asserts the branches a budget must force on a dataset.
func checkHashStats(t *testing.T, d joinData, b joinBudget, opts HashJoinOptions, st JoinStats) {
	t.Helper()
	build, probe := d.left, d.right
	if opts.Build == Right {
		build, probe = d.right, d.left
	}
	if st.BuildRecords != int64(len(build)) {
		t.Errorf("BuildRecords = %d, want %d", st.BuildRecords, len(build))
	}
	if st.ProbeRecords != 0 && st.ProbeRecords != int64(len(probe)) {
		t.Errorf("ProbeRecords = %d, want 0 or %d", st.ProbeRecords, len(probe))
	}
	if !b.tiny {
		if b.mem.Budget == 0 && (st.SpilledPartitions != 0 || st.BytesSpilled != 0) {
			t.Errorf("unlimited budget spilled: %+v", st)
		}
		return
	}
	if !d.big || len(build) == 0 {
		return
	}
	if st.SpilledPartitions == 0 || st.BytesSpilled == 0 {
		t.Errorf("tiny budget did not spill: %+v", st)
	}
	if st.MaxLevel > max(opts.MaxRecursion, 0) {
		t.Errorf("MaxLevel %d beyond MaxRecursion %d", st.MaxLevel, opts.MaxRecursion)
	}
	if len(probe) == 0 {
		return
	}
	switch {
	case d.oneKey:
		if st.SingleKeyFallbacks == 0 {
			t.Errorf("single hot key did not take the sort-merge fallback: %+v", st)
		}
	case b.maxRecursion < 0:
		if st.SortMergeFallbacks == 0 {
			t.Errorf("MaxRecursion < 0 did not fall back to sort-merge: %+v", st)
		}
		if st.MaxLevel != 0 {
			t.Errorf("MaxRecursion < 0 repartitioned: %+v", st)
		}
	}
}

// TestHashJoinRecursion checks that a budget a little too small repartitions
// instead of falling back, and that the levels are bounded.
func TestHashJoinRecursion(t *testing.T) {
	d := joinDatasets()[4] // unique
	if d.name != "unique" {
		t.Fatalf("dataset %s", d.name)
	}
	want := oracleAll(d.left, d.right)[Inner]
	e := newJoinEnv(t, memory.Options{SegmentSize: 4096, Budget: 12 * 4096})
	got, st, err := runHashJoin(context.Background(), e.Env, HashJoinOptions{Name: "rec", Partitions: 2}, d.left, d.right, Inner)
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, got, want)
	if st.MaxLevel < 1 || st.MaxLevel > DefaultJoinMaxRecursion || st.SortMergeFallbacks != 0 {
		t.Errorf("stats %+v: want repartitioning without fallback", st)
	}
	e.check(t)
}

// TestHashJoinParallel runs one join per hash partition of the inputs, all at once,
// sharing one Manager and one spill FS.
func TestHashJoinParallel(t *testing.T) {
	const n = 4
	for _, dn := range []string{"duplicates", "zipf", "all-equal", "large-records"} {
		var d joinData
		for _, x := range joinDatasets() {
			if x.name == dn {
				d = x
			}
		}
		for _, kind := range allJoinKinds {
			t.Run(dn+"/"+kind.String(), func(t *testing.T) {
				e := newJoinDiskEnv(t, joinTiny)
				lp, rp := hashSplit(d.left, n), hashSplit(d.right, n)
				var c rowCollector
				var wg sync.WaitGroup
				errs := make([]error, n)
				for i := range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						opts := HashJoinOptions{Name: fmt.Sprintf("hj%d", i), Build: Side(i % 2), Seed: uint64(i)}
						_, errs[i] = HashJoin(context.Background(), e.Env, opts, SliceIterator(lp[i]), SliceIterator(rp[i]), kind, c.emit)
					}()
				}
				wg.Wait()
				for i, err := range errs {
					if err != nil {
						t.Fatalf("join %d: %v", i, err)
					}
				}
				checkRows(t, c.sorted(), oracleJoin(d.left, d.right, kind))
				if !e.spilled() {
					t.Error("no join spilled")
				}
				e.check(t)
			})
		}
	}
}

// TestHashJoinFaults fails one spill operation at a time, at several points.
func TestHashJoinFaults(t *testing.T) {
	var d joinData
	for _, x := range joinDatasets() {
		if x.name == "duplicates" {
			d = x
		}
	}
	cases := []struct {
		op    spill.Op
		nth   int
		rec   int
		build Side
	}{
		{spill.OpCreate, 1, 0, Left}, {spill.OpCreate, 3, 0, Right},
		{spill.OpWrite, 1, 0, Left}, {spill.OpWrite, 20, 0, Right}, {spill.OpWrite, 60, 0, Left},
		{spill.OpSync, 2, 0, Left},
		{spill.OpOpen, 1, 0, Right}, {spill.OpOpen, 4, 0, Left},
		{spill.OpRead, 1, 0, Left}, {spill.OpRead, 30, 0, Right},
		{spill.OpWrite, 5, -1, Left}, {spill.OpRead, 5, -1, Right}, {spill.OpOpen, 3, -1, Left},
		{spill.OpRemove, 1, 0, Left}, {spill.OpRemove, 4, -1, Right},
	}
	for _, c := range cases {
		for _, kind := range []JoinKind{Inner, FullOuter, Anti} {
			t.Run(fmt.Sprintf("%s-%d-rec%d-%s/%s", c.op, c.nth, c.rec, c.build, kind), func(t *testing.T) {
				e := newJoinDiskEnv(t, joinTiny)
				if c.op == spill.OpRemove {
					// Runs in files of their own, so that files are removed before
					// Close: a removal failing in Space.Close leaves its file to
					// DiskFS.Close.
					e.Spill.FileSize = -1
				}
				e.fault.FailNth(c.op, c.nth)
				opts := HashJoinOptions{Name: "faulty", Build: c.build, MaxRecursion: c.rec}
				_, _, err := runHashJoin(context.Background(), e.Env, opts, d.left, d.right, kind)
				if !errors.Is(err, spill.ErrInjected) {
					t.Fatalf("err = %v, want the injected fault", err)
				}
				if !strings.Contains(err.Error(), c.op.String()) || !strings.Contains(err.Error(), "faulty") {
					t.Errorf("error does not name the operation %q and the join: %v", c.op, err)
				}
				e.check(t)
			})
		}
	}
}

// cancelIter cancels a context after n records.
type cancelIter struct {
	Iterator
	n      int
	cancel context.CancelFunc
}

func (c *cancelIter) Next() ([]byte, []byte, bool) {
	if c.n--; c.n == 0 {
		c.cancel()
	}
	return c.Iterator.Next()
}

// TestHashJoinCancel cancels the context while building, probing, recursing and
// emitting.
func TestHashJoinCancel(t *testing.T) {
	var d joinData
	for _, x := range joinDatasets() {
		if x.name == "duplicates" {
			d = x
		}
	}
	for _, rec := range []int{0, -1} {
		for _, at := range []string{"build", "probe", "emit", "before"} {
			t.Run(fmt.Sprintf("%s/rec%d", at, rec), func(t *testing.T) {
				e := newJoinDiskEnv(t, joinTiny)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var left, right Iterator = SliceIterator(d.left), SliceIterator(d.right)
				emitted := 0
				emit := func(k, l, r []byte) error {
					if emitted++; at == "emit" && emitted == 100 {
						cancel()
					}
					return nil
				}
				switch at {
				case "build":
					left = &cancelIter{Iterator: left, n: 500, cancel: cancel}
				case "probe":
					right = &cancelIter{Iterator: right, n: 600, cancel: cancel}
				case "before":
					cancel()
				}
				_, err := HashJoin(ctx, e.Env, HashJoinOptions{Name: "cancelled", MaxRecursion: rec}, left, right, Inner, emit)
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("err = %v, want context.Canceled", err)
				}
				e.check(t)
			})
		}
	}
}

// TestHashJoinEmitError checks that an error of emit stops the join and is returned.
func TestHashJoinEmitError(t *testing.T) {
	d := joinDatasets()[5] // duplicates
	stop := errors.New("stop")
	for _, b := range joinBudgets {
		t.Run(b.name, func(t *testing.T) {
			e := newJoinDiskEnv(t, b.mem)
			n := 0
			emit := func(k, l, r []byte) error {
				if n++; n == 500 {
					return stop
				}
				return nil
			}
			opts := HashJoinOptions{Name: "emitfail", MaxRecursion: b.maxRecursion}
			_, err := HashJoin(context.Background(), e.Env, opts, SliceIterator(d.left), SliceIterator(d.right), FullOuter, emit)
			if !errors.Is(err, stop) || n != 500 {
				t.Fatalf("err = %v after %d rows, want stop after 500", err, n)
			}
			e.check(t)
		})
	}
}

// errIter fails after n records.
type errIter struct {
	Iterator
	n   int
	err error
}

func (e *errIter) Next() ([]byte, []byte, bool) {
	if e.n == 0 {
		e.err = errors.New("input broke")
		return nil, nil, false
	}
	e.n--
	return e.Iterator.Next()
}

func (e *errIter) Err() error { return e.err }

// TestHashJoinInputError checks that an input's error is returned, for both sides.
func TestHashJoinInputError(t *testing.T) {
	d := joinDatasets()[5]
	for _, side := range []Side{Left, Right} {
		for _, b := range []joinBudget{joinBudgets[0], joinBudgets[2]} {
			t.Run(side.String()+"/"+b.name, func(t *testing.T) {
				e := newJoinDiskEnv(t, b.mem)
				var left, right Iterator = SliceIterator(d.left), SliceIterator(d.right)
				if side == Left {
					left = &errIter{Iterator: left, n: 700}
				} else {
					right = &errIter{Iterator: right, n: 700}
				}
				_, err := HashJoin(context.Background(), e.Env, HashJoinOptions{Build: Left}, left, right, Inner, func(k, l, r []byte) error { return nil })
				if err == nil || !strings.Contains(err.Error(), "input broke") {
					t.Fatalf("err = %v", err)
				}
				e.check(t)
			})
		}
	}
}

// TestHashJoinOptions checks the defaults and the argument checks.
func TestHashJoinOptions(t *testing.T) {
	o := HashJoinOptions{}.EnsureDefaults()
	if o.Name != "hashjoin" || o.MaxRecursion != DefaultJoinMaxRecursion || o.Partitions != 0 {
		t.Errorf("defaults: %+v", o)
	}
	for in, want := range map[int]int{1: 2, 3: 4, 32: 32, 33: 64, 5000: 1024} {
		if got := (HashJoinOptions{Partitions: in}).EnsureDefaults().Partitions; got != want {
			t.Errorf("Partitions %d → %d, want %d", in, got, want)
		}
	}
	e := newJoinEnv(t, memory.Options{})
	none := func(k, l, r []byte) error { return nil }
	if _, err := HashJoin(context.Background(), e.Env, HashJoinOptions{}, SliceIterator(nil), SliceIterator(nil), JoinKind(9), none); err == nil {
		t.Error("unknown kind accepted")
	}
	if _, err := HashJoin(context.Background(), e.Env, HashJoinOptions{Build: Side(5)}, SliceIterator(nil), SliceIterator(nil), Inner, none); err == nil {
		t.Error("unknown build side accepted")
	}
	st, err := HashJoin(context.Background(), e.Env, HashJoinOptions{}, SliceIterator(nil), SliceIterator(nil), Inner, none)
	if err != nil || st.Partitions != DefaultJoinPartitions {
		t.Errorf("unlimited: partitions %d, err %v", st.Partitions, err)
	}
	e.check(t)
	e = newJoinEnv(t, joinTiny)
	if st, _ := HashJoin(context.Background(), e.Env, HashJoinOptions{}, SliceIterator(nil), SliceIterator(nil), Inner, none); st.Partitions != 2 {
		t.Errorf("tiny budget: %d partitions, want 2", st.Partitions)
	}
	e.check(t)
}

// TestHashJoinProbeAllocs checks that probing allocates nothing per record: the
// allocations of a join do not grow with the probe input.
func TestHashJoinProbeAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under the race detector are not the program's")
	}
	build := genRecords('B', 1000, 16, func(i int) []byte { return uintKey(uint64(i)) })
	probe := genRecords('P', 40000, 16, func(i int) []byte { return uintKey(uint64(i * 7 % 1500)) })
	for _, kind := range allJoinKinds {
		for _, side := range []Side{Left, Right} {
			e := newJoinEnv(t, memory.Options{SegmentSize: 4096})
			rows := 0
			emit := func(k, l, r []byte) error { rows++; return nil }
			left, right := build, probe
			if side == Right {
				left, right = probe, build
			}
			allocs := func(n int) float64 {
				l, r := left, right
				if side == Left {
					r = r[:n]
				} else {
					l = l[:n]
				}
				return testing.AllocsPerRun(5, func() {
					if _, err := HashJoin(context.Background(), e.Env, HashJoinOptions{Build: side}, SliceIterator(l), SliceIterator(r), kind, emit); err != nil {
						t.Fatal(err)
					}
				})
			}
			small, large := allocs(10000), allocs(40000)
			t.Logf("%s build-%s: %.0f allocs probing 10000 records, %.0f probing 40000", kind, side, small, large)
			if large > small+2 {
				t.Errorf("%s build-%s: %.0f allocs probing 10000 records, %.0f probing 40000", kind, side, small, large)
			}
			e.check(t)
		}
	}
}

// TestHashJoinTagCollision joins keys whose hashes share their top 32 bits (the
// slot tag) and their home slot, so that inserts and probes meet a slot with the
// right tag and the wrong key.
func TestHashJoinTagCollision(t *testing.T) {
	const seed = 11
	var k1, k2 []byte
	seen := make(map[uint32]uint64, 1<<20)
	for v := uint64(0); k1 == nil; v++ {
		h := memory.Hash(uintKey(v), seed)
		if w, ok := seen[uint32(h>>32)]; ok && memory.Hash(uintKey(w), seed)&7 == h&7 {
			k1, k2 = uintKey(w), uintKey(v)
		}
		seen[uint32(h>>32)] = v
	}
	k3 := uintKey(1 << 62)
	left := []Record{{Key: k1, Val: []byte("l1")}, {Key: k2, Val: []byte("l2")}, {Key: k2, Val: []byte("l3")}}
	right := []Record{{Key: k2, Val: []byte("r1")}, {Key: k3, Val: []byte("r2")}, {Key: k1, Val: []byte("r3")}, {Key: k2, Val: []byte("r4")}}
	want := oracleAll(left, right)
	for _, build := range []Side{Left, Right} {
		for _, kind := range allJoinKinds {
			e := newJoinEnv(t, memory.Options{SegmentSize: 4096})
			got, _, err := runHashJoin(context.Background(), e.Env, HashJoinOptions{Build: build, Seed: seed, Partitions: 2}, left, right, kind)
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, got, want[kind])
			e.check(t)
		}
	}
}
