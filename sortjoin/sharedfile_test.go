package sortjoin

import (
	"errors"
	"fmt"
	"testing"

	"github.com/weirdata/weir/spill"
)

// TestSortSharesSpillFiles sorts under a tiny budget into many runs and
// several merge passes: the runs share a few spill files rather than one
// file each, the output equals the oracle's, and nothing is left behind.
func TestSortSharesSpillFiles(t *testing.T) {
	recs := manyRecords(11, 20000)
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			env, faults := faultySortEnv(t)
			out, st := sortAll(t, env.Env, SortOptions{Async: async, MaxFanIn: 4}, recs)
			checkSorted(t, recs, out)
			files := faults.Count(spill.OpCreate)
			t.Logf("%d runs, %d merge passes, %d files", st.Runs, st.MergePasses, files)
			if st.Runs < 50 || st.MergePasses == 0 {
				t.Fatalf("%d runs and %d merge passes: the budget did not force many runs", st.Runs, st.MergePasses)
			}
			if files > 3 {
				t.Errorf("%d spill files for %d runs, want at most 3", files, st.Runs)
			}
			env.check(t)
		})
	}
}

// TestSortSharedFileFault fails a write in the middle of a run appended to a
// spill file that already holds several runs: the sort fails, every
// reservation is released and no file is left.
func TestSortSharedFileFault(t *testing.T) {
	recs := manyRecords(12, 8000)
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			// A clean sort counts the writes; the fault hits at two thirds of them.
			env, faults := faultySortEnv(t)
			_, st := sortAll(t, env.Env, SortOptions{Async: async}, recs)
			writes := faults.Count(spill.OpWrite)
			env.check(t)
			if st.Runs < 10 {
				t.Fatalf("%d runs, want many", st.Runs)
			}
			env, faults = faultySortEnv(t)
			faults.FailNth(spill.OpWrite, writes*2/3)
			_, err := sortToSlice(env.Env, SortOptions{Async: async}, recs)
			if !errors.Is(err, spill.ErrInjected) || faults.Count(spill.OpCreate) != 1 {
				t.Fatalf("error %v after %d files created, want the injected fault in the one shared file", err, faults.Count(spill.OpCreate))
			}
			env.check(t)
		})
	}
}

// faultySortEnv returns a sort environment under the tiny budget whose spill
// directory is behind a FaultFS.
func faultySortEnv(t *testing.T) (sortEnv, *spill.FaultFS) {
	env := newSortEnv(t, tinyMem, testSpill)
	faults := spill.NewFaultFS(env.disk)
	env.FS = faults
	return env, faults
}
