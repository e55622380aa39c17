package stream

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/checkpoint"
)

// TestStopWithSavepoint stops a job at parallelism 2 with a savepoint
// after 40 of 100 numbers (and 20 more released, which its sources must not
// read): Wait reports success, the sinks committed exactly what the
// savepoint covers, and a job restored from the savepoint (checkpoint.Load)
// at parallelism 1, 2 and 3 commits the rest: together exactly the lines of
// an uninterrupted run. Flink's SavepointITCase.testStopWithSavepoint...
// checks the same sequence (stop, then resume from the path).
func TestStopWithSavepoint(t *testing.T) {
	const n = 100
	for _, p2 := range []int{1, 2, 3} {
		t.Run(fmt.Sprint("2to", p2), func(t *testing.T) {
			dir, sp, src, j := startSums(t, n)
			path, err := j.StopWithSavepoint(context.Background(), sp)
			if err != nil {
				t.Fatal(err)
			}
			src.release(20)
			if _, err := j.Wait(); err != nil {
				t.Fatalf("the stopped job failed: %v", err)
			}
			if s := j.Status(); s.String() != "FINISHED" {
				t.Fatalf("status %v, want FINISHED", s)
			}
			first, hidden := dirState(t, dir)
			if len(first) != 40 || len(hidden) != 0 {
				t.Fatalf("committed %d lines (hidden %v) at the stop, want the 40 the savepoint covers", len(first), hidden)
			}
			for _, l := range first {
				if !slices.Contains(sumsOracle(n), l) {
					t.Fatalf("committed %q at the stop, not a line of an uninterrupted run", l)
				}
			}
			resumeSums(t, n, p2, path, dir)
		})
	}
}

// startSums starts keyedSums at parallelism 2 with checkpoints and lets it
// read 40 of n numbers; it returns the output directory, a savepoint
// directory, the source and the job.
func startSums(t *testing.T, n int) (dir, sp string, src *gated[int], j *Job) {
	t.Helper()
	dir, sp = t.TempDir(), t.TempDir()
	src = newGated(ints(n))
	env := New(Options{Parallelism: 2, Clock: manual()})
	env.EnableCheckpointing(time.Hour)
	keyedSums(env, src, n, dir, nil)
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	src.release(40)
	waitUntil(t, "40 records read", func() bool { return sourceOut(j) >= 40 })
	return dir, sp, src, j
}

// resumeSums runs keyedSums at parallelism p from the savepoint at path
// into dir and checks that dir then holds exactly the lines of an
// uninterrupted run.
func resumeSums(t *testing.T, n, p int, path, dir string) {
	t.Helper()
	snap, err := checkpoint.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Kind != checkpoint.Savepoint {
		t.Fatalf("%s is a %s", path, snap.Kind)
	}
	env := New(Options{Parallelism: p, Clock: manual(), Restore: snap})
	src := newGated(ints(n))
	src.open()
	keyedSums(env, src, n, dir, nil)
	if _, err := env.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c, h := dirState(t, dir); !slices.Equal(c, sumsOracle(n)) || len(h) != 0 {
		t.Fatalf("committed %d lines (hidden %v), want the %d of an uninterrupted run", len(c), h, n)
	}
}

// TestStopWithSavepointNoCheckpoints: a job without checkpointing cannot
// stop with a savepoint.
func TestStopWithSavepointNoCheckpoints(t *testing.T) {
	src := newGated(ints(10))
	env := New(Options{Parallelism: 1, Clock: manual()})
	keyedSums(env, src, 10, t.TempDir(), nil)
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.StopWithSavepoint(context.Background(), t.TempDir()); err == nil {
		t.Fatal("stopped a job without checkpoints with a savepoint")
	}
	src.open()
	if _, err := j.Wait(); err != nil {
		t.Fatal(err)
	}
}

// sourceOut is the records the job's sources emitted.
func sourceOut(j *Job) int64 {
	var n int64
	for _, v := range j.Overview().Vertices {
		if len(v.Operators) > 0 && v.Operators[0].Name == "numbers" {
			n += v.Operators[0].RecordsOut
		}
	}
	return n
}

// TestFinalSnapshotCommits: a checkpointing job whose input ended stores
// its final snapshot with the FileSink's last parts and then commits them.
// With the parts put back to pending, as a process that died between the
// store and the commit leaves them, the same job run again finds the job
// finished and commits them: the uninterrupted run's lines, nothing hidden.
func TestFinalSnapshotCommits(t *testing.T) {
	const n = 50
	dir := t.TempDir()
	store := checkpoint.NewMemory(1)
	run := func() {
		env := New(Options{Parallelism: 2, Clock: manual()})
		env.EnableCheckpointing(time.Hour).Storage = store
		src := newGated(ints(n))
		src.open()
		keyedSums(env, src, n, dir, nil)
		if _, err := env.Execute(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	run()
	s, _, _ := store.Latest()
	if s == nil || !s.Finished || len(s.Operators) != 1 {
		t.Fatalf("final snapshot %+v, want a finished one holding the sink's parts", s)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var states []byte // the committables' names are plain bytes of the sink's state
	for _, sub := range s.Operators[0].Subtasks {
		states = append(states, sub.State...)
	}
	pendings := pendingNames(string(states))
	for _, e := range ents {
		if err := os.Rename(filepath.Join(dir, e.Name()), filepath.Join(dir, pendings[e.Name()])); err != nil {
			t.Fatal(err)
		}
	}
	if c, _ := dirState(t, dir); len(c) != 0 {
		t.Fatalf("%d lines committed after the revert", len(c))
	}
	run()
	if c, h := dirState(t, dir); !slices.Equal(c, sumsOracle(n)) || len(h) != 0 {
		t.Fatalf("committed %d lines (hidden %v), want the %d of an uninterrupted run", len(c), h, n)
	}
}

// TestTriggerSavepoint takes a savepoint of a running job at parallelism 2
// after 40 of 100 numbers: the job runs on (it reads 20 more), the
// savepoint commits nothing (Flink's intermediate savepoint), and the job
// is then cancelled, as a process that dies. A job restored from the
// savepoint at parallelism 1, 2 and 3 commits exactly the lines of an
// uninterrupted run.
func TestTriggerSavepoint(t *testing.T) {
	const n = 100
	for _, p2 := range []int{1, 2, 3} {
		t.Run(fmt.Sprint("2to", p2), func(t *testing.T) {
			dir, sp, src, j := startSums(t, n)
			path, err := j.TriggerSavepoint(context.Background(), sp)
			if err != nil {
				t.Fatal(err)
			}
			src.release(20)
			waitUntil(t, "60 records read after the savepoint", func() bool { return sourceOut(j) >= 60 })
			if s := j.Status(); s.String() != "RUNNING" {
				t.Fatalf("status %v after the savepoint, want RUNNING", s)
			}
			if c, _ := dirState(t, dir); len(c) != 0 {
				t.Fatalf("the savepoint committed %d lines, want none", len(c))
			}
			j.Cancel()
			if _, err := j.Wait(); err == nil {
				t.Fatal("the cancelled job reports success")
			}
			resumeSums(t, n, p2, path, dir)
		})
	}
}

// TestTriggerSavepointNoCheckpoints: a job without checkpointing cannot
// take a savepoint, and runs on.
func TestTriggerSavepointNoCheckpoints(t *testing.T) {
	src := newGated(ints(10))
	env := New(Options{Parallelism: 1, Clock: manual()})
	keyedSums(env, src, 10, t.TempDir(), nil)
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.TriggerSavepoint(context.Background(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "EnableCheckpointing") {
		t.Fatalf("err = %v", err)
	}
	src.open()
	if _, err := j.Wait(); err != nil {
		t.Fatal(err)
	}
}

// pendingNames finds the pending file names of committables in s (a
// snapshot's bytes): final name -> pending name.
func pendingNames(s string) map[string]string {
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`\.(part-\d+-\d+)\.pending\.[0-9a-f]{16}`).FindAllStringSubmatch(s, -1) {
		out[m[1]] = m[0]
	}
	return out
}
