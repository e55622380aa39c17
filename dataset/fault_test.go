package dataset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/dataset/agg"
	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/spill"
)

// faultProgram builds a program on env and returns a check of its result.
type faultProgram struct {
	name  string
	build func(env *Env) func() error
	opts  Options
}

func faultPrograms() []faultProgram {
	keys := make([]int64, 6000)
	for i := range keys {
		keys[i] = int64(i*7919) % 5000
	}
	per := map[int64]int64{}
	for _, k := range keys {
		per[k]++
	}
	var pairs int64 // the self-join's output
	for _, n := range per {
		pairs += n * n
	}
	vs, ls := randomGraph(11, 1500, 3000)
	return []faultProgram{
		{"join", func(env *Env) func() error {
			l, r := FromSlice(env, keys), FromSlice(env, keys)
			out := Count(Join(l, r, Self[int64](), Self[int64](), func(a, b *int64) int64 { return *a }).
				WithJoinHint(RepartitionHashSecond))
			return func() error { return expect(out.N(), pairs) }
		}, Options{}},
		{"sort-merge-join", func(env *Env) func() error {
			out := Count(Join(FromSlice(env, keys), FromSlice(env, keys), Self[int64](), Self[int64](),
				func(a, b *int64) int64 { return *a }).WithJoinHint(RepartitionSortMerge))
			return func() error { return expect(out.N(), pairs) }
		}, Options{}},
		{"aggregate", func(env *Env) func() error {
			out := Collect(Aggregate(GroupBy(FromSlice(env, keys), Self[int64]()), agg.Sum(func(v int64) int64 { return v })))
			return func() error {
				var sum int64
				for _, kv := range out.Values() {
					if kv.Key != 0 && kv.Value%kv.Key != 0 {
						return fmt.Errorf("key %d sums to %d", kv.Key, kv.Value)
					}
					sum += kv.Value
				}
				var want int64
				for _, k := range keys {
					want += k
				}
				return expect(sum, want)
			}
		}, Options{}},
		{"sort", func(env *Env) func() error {
			out := Collect(Sort(FromSlice(env, keys), Self[int64](), Descending))
			return func() error {
				want := slices.Clone(keys)
				slices.Sort(want)
				slices.Reverse(want)
				if !slices.Equal(out.Values(), want) {
					return fmt.Errorf("the sorted output differs from slices.Sort")
				}
				return nil
			}
		}, Options{}},
		{"iteration", func(env *Env) func() error {
			out := Collect(connectedComponents(env, vs, ls, 1000))
			want := unionFind(vs, ls)
			return func() error {
				if len(out.Values()) != len(vs) {
					return fmt.Errorf("%d vertices, want %d", len(out.Values()), len(vs))
				}
				for _, x := range out.Values() {
					if want[x.V] != x.C {
						return fmt.Errorf("vertex %d in component %d, want %d", x.V, x.C, want[x.V])
					}
				}
				return nil
			}
		}, Options{}},
		{"adaptive", func(env *Env) func() error {
			out := adProgram(env, keepFive, adJoin)
			return func() error {
				if got, want := sortedAd(out.Values()), adOracle(keepFive); !slices.Equal(got, want) {
					return fmt.Errorf("got %d rows, want %d", len(got), len(want))
				}
				return nil
			}
		}, Options{Adaptive: true}},
	}
}

func expect(got, want int64) error {
	if got != want {
		return fmt.Errorf("got %d, want %d", got, want)
	}
	return nil
}

// faultOps are the spill file system operations TestSpillFaults fails.
var faultOps = []spill.Op{spill.OpCreate, spill.OpWrite, spill.OpSync, spill.OpOpen, spill.OpRead, spill.OpRemove}

// TestSpillFaults drives spill file system failures through whole programs
// (Options.SpillFS) under a budget small enough that they spill: a join, a
// sort-merge join, an aggregation, a sort, an iteration and an adaptive
// execution. Without a fault each one's result equals its oracle's and it
// wrote spill files; with the k-th create, write, sync, open, read or remove
// failing, Execute fails with an error that wraps spill.ErrInjected and names
// the operation, no file is left in the spill directory, and the error holds
// no reservation left unreleased (closeManager adds those to the job's error).
// A failed remove leaves its one file, and cleanup paths may drop its error:
// then the result must still be right. -short fails only the first of each; otherwise the first and the last.
func TestSpillFaults(t *testing.T) {
	for _, p := range faultPrograms() {
		var ops [6]int // the clean run's operations of each kind
		t.Run(p.name+"/clean", func(t *testing.T) {
			ffs, dir := faultFS(t)
			check, err := runFaulty(p, ffs)
			if err != nil {
				t.Fatal(err)
			}
			if err := check(); err != nil {
				t.Fatal(err)
			}
			for i, op := range faultOps {
				ops[i] = ffs.Count(op)
			}
			if ops[0] == 0 {
				t.Fatal("the program wrote no spill file: the faults below would test nothing")
			}
			noFiles(t, dir)
		})
		for i, op := range faultOps {
			nths := []int{1, -1} // negative: counted back from the clean run's last
			if testing.Short() {
				nths = []int{1}
			}
			for _, k := range nths {
				t.Run(fmt.Sprintf("%s/%s/%d", p.name, op, k), func(t *testing.T) {
					nth := k
					if nth < 0 {
						nth += ops[i] + 1
					}
					if nth <= 0 || nth > ops[i] || (k < 0 && nth <= 1) {
						t.Skipf("the clean run made %d %s operations", ops[i], op)
					}
					ffs, dir := faultFS(t)
					ffs.FailNth(op, nth)
					check, err := runFaulty(p, ffs)
					switch {
					case err == nil && ffs.Count(op) < nth:
						// a run may spill less than the clean one (timing): then it must be right
						if err := check(); err != nil {
							t.Fatal(err)
						}
					case err == nil && op == spill.OpRemove:
						// cleanup paths (a spool's Reset, a sorter's Close) drop remove errors
						if err := check(); err != nil {
							t.Fatal(err)
						}
					case err == nil:
						t.Fatalf("the %d-th %s failed and Execute succeeded", nth, op)
					case !errors.Is(err, spill.ErrInjected):
						t.Fatalf("got %v, want an injected fault", err)
					case !strings.Contains(err.Error(), "faultfs "+op.String()):
						t.Errorf("the error does not name the %s: %v", op, err)
					case strings.Contains(err.Error(), "not released"):
						t.Errorf("reservations leaked: %v", err)
					}
					if op == spill.OpRemove {
						// the file whose removal failed stays: FaultFS did not pass the remove on
						leftAtMost(t, dir, 1)
						return
					}
					noFiles(t, dir)
				})
			}
		}
	}
}

// runFaulty builds p on an Env whose spill files go to fs, runs it under a
// tiny budget and returns its check.
func runFaulty(p faultProgram, fs spill.FS) (func() error, error) {
	opts := p.opts
	opts.Parallelism, opts.Memory, opts.SegmentSize, opts.BatchSize = 2, 96<<10, 4096, 64
	opts.SpillFS = fs
	env := New(opts)
	check := p.build(env)
	_, err := env.Execute(context.Background())
	return check, err
}

// faultFS returns a FaultFS over a disk directory that the test removes, and
// that directory.
func faultFS(t *testing.T) (*spill.FaultFS, string) {
	t.Helper()
	disk, err := spill.NewDiskFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { disk.Close() })
	return spill.NewFaultFS(disk), disk.Dir()
}

// leftAtMost fails t if dir holds more than n files.
func leftAtMost(t *testing.T, dir string, n int) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) > n {
		t.Errorf("%d files left in the spill directory, want at most %d", len(ents), n)
	}
}

func noFiles(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("files left in the spill directory: %v", names)
	}
}

// TestCloseManagerNamesLeaks checks the check every stage ends with: a
// reservation not released is an error naming its owner, added to the job's.
func TestCloseManagerNamesLeaks(t *testing.T) {
	m, err := memory.NewManager(memory.Options{SegmentSize: 4096, Budget: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	r := m.NewReservation("leaky operator")
	if err := r.Grow(4096); err != nil {
		t.Fatal(err)
	}
	job := errors.New("the job's error")
	err = closeManager(m, job)
	if !errors.Is(err, job) || !strings.Contains(err.Error(), "leaky operator") || !strings.Contains(err.Error(), "not released") {
		t.Fatalf("got %v, want the job's error and the leak", err)
	}
	m2, _ := memory.NewManager(memory.Options{SegmentSize: 4096})
	if err := closeManager(m2, nil); err != nil {
		t.Fatalf("a manager with nothing reserved: %v", err)
	}
}
