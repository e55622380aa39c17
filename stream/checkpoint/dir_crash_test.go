package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestDirStoreCrash fails each step of a Store in turn: either the step
// returns an error and the Store goes on to clean up, or the process
// stops there (a crash: the step and every one after it fail, a write
// is torn halfway). A Dir opened afterwards returns checkpoint 1 or 2 as
// stored, never a torn one; 2 whenever Store reported success; and holds
// no leftovers: only the retained checkpoint's directory and the shared
// files it names.
func TestDirStoreCrash(t *testing.T) {
	one := testSnapshot(1, []string{"old"}, []string{"both"})
	two := testSnapshot(2, []string{"both"}, []string{"new"})
	for _, crash := range []bool{false, true} {
		mode := "error"
		if crash {
			mode = "crash"
		}
		outcomes := map[int64]int{}
		for step := 0; ; step++ {
			path := t.TempDir()
			d, err := OpenDir(path, DirOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"old", "both"} {
				writeShared(t, d, name)
			}
			if _, err := d.Store(one); err != nil {
				t.Fatal(err)
			}
			d.Close() // a crash releases the lock too
			ffs := &faultFS{fileSystem: osFS{}, crash: crash, failAt: step}
			fd, err := OpenDir(path, DirOptions{fs: ffs})
			if err != nil {
				t.Fatal(err)
			}
			writeShared(t, fd, "new") // the runtime writes it after opening
			ffs.armed = true
			_, storeErr := fd.Store(two)
			if !ffs.fired {
				if storeErr != nil {
					t.Fatalf("%s: Store without a failure: %v", mode, storeErr)
				}
				if step < 10 || outcomes[1] == 0 || outcomes[2] == 0 {
					t.Fatalf("%s: %d steps, outcomes %v: want failures that leave each checkpoint", mode, step, outcomes)
				}
				break
			}
			if storeErr != nil && !errors.Is(storeErr, errInjected) {
				t.Fatalf("%s at step %d: Store: %v", mode, step, storeErr)
			}
			fd.Close()
			reopened, err := OpenDir(path, DirOptions{})
			if err != nil {
				t.Fatalf("%s at step %d: reopen: %v", mode, step, err)
			}
			defer reopened.Close()
			got, _, err := reopened.Latest()
			if err != nil {
				t.Fatalf("%s at step %d: Latest: %v", mode, step, err)
			}
			var want *Snapshot
			switch {
			case reflect.DeepEqual(got, two):
				want = two
			case reflect.DeepEqual(got, one) && storeErr != nil:
				want = one
			default:
				t.Fatalf("%s at step %d (Store: %v): Latest = %+v", mode, step, storeErr, got)
			}
			outcomes[want.ID]++
			if len(reopened.Skipped()) != 0 {
				t.Fatalf("%s at step %d: reopening skipped %v", mode, step, reopened.Skipped())
			}
			wantDirs := []string{"chk-" + string(rune('0'+want.ID)), "shared"}
			if got := listDir(t, path); !slices.Equal(got, wantDirs) {
				t.Fatalf("%s at step %d: storage holds %v, want %v", mode, step, got, wantDirs)
			}
			var wantShared []string
			for _, op := range want.Operators {
				for _, st := range op.Subtasks {
					wantShared = append(wantShared, st.Shared...)
				}
			}
			slices.Sort(wantShared)
			if got := listDir(t, filepath.Join(path, "shared")); !slices.Equal(got, wantShared) {
				t.Fatalf("%s at step %d: shared holds %v, want %v", mode, step, got, wantShared)
			}
			for _, name := range listDir(t, filepath.Join(path, wantDirs[0])) {
				if strings.Contains(name, "tmp") {
					t.Fatalf("%s at step %d: %s left", mode, step, name)
				}
			}
		}
	}
}

// TestWriteSavepointCrash fails each step of WriteSavepoint: the savepoint
// directory holds a complete savepoint or none, and an error leaves no
// temporary directory behind.
func TestWriteSavepointCrash(t *testing.T) {
	src := t.TempDir()
	d, err := OpenDir(src, DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writeShared(t, d, "s1")
	sp := testSnapshot(4, []string{"s1"}, nil)
	sp.Kind = Savepoint
	for step := 0; ; step++ {
		dir := t.TempDir()
		ffs := &faultFS{fileSystem: osFS{}, failAt: step, armed: true}
		path, err := writeSavepoint(ffs, dir, sp, d.OpenShared)
		if !ffs.fired {
			if err != nil {
				t.Fatal(err)
			}
			break
		}
		entries := listDir(t, dir)
		switch {
		case err == nil:
			if got, lerr := Load(path); lerr != nil || !reflect.DeepEqual(got, sp) {
				t.Fatalf("step %d: Load = %v, %v", step, got, lerr)
			}
		case len(entries) == 1 && !strings.HasPrefix(entries[0], "."):
			// Failed after the rename: the savepoint is complete.
			if got, lerr := Load(filepath.Join(dir, entries[0])); lerr != nil || !reflect.DeepEqual(got, sp) {
				t.Fatalf("step %d: Load = %v, %v", step, got, lerr)
			}
		case len(entries) != 0:
			t.Fatalf("step %d (%v): savepoint directory holds %v", step, err, entries)
		}
		_ = os.RemoveAll(dir)
	}
}
