package stream

import (
	"context"
	"errors"
	"fmt"
	"github.com/weirdata/weir/stream/internal/coordinator"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/watermark"
)

// checkpointMidway runs keyedSums over n numbers at parallelism 2 with
// opts, checkpoints once 40 records are read, reads 20 more and cancels: the storage
// it returns holds the checkpoint.
func checkpointMidway(t *testing.T, opts Options, n int, dir string) *checkpoint.Memory {
	t.Helper()
	store := checkpoint.NewMemory(1)
	src := newGated(ints(n))
	opts.Parallelism, opts.Clock = 2, manual()
	env := New(opts)
	env.EnableCheckpointing(time.Hour).Storage = store
	keyedSums(env, src, n, dir, nil)
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	src.release(40)
	waitUntil(t, "40 records read", func() bool { return sourceOut(j) >= 40 })
	if _, err := j.TriggerCheckpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	src.release(20)
	j.Cancel()
	j.Wait()
	return store
}

// TestRestoreMissingOperator: state of an operator the program lacks fails
// the restore with Flink's message, unless AllowNonRestoredState, which
// skips it (Flink's Checkpoints.loadAndValidateCheckpoint).
func TestRestoreMissingOperator(t *testing.T) {
	const n = 100
	store := checkpointMidway(t, Options{}, n, t.TempDir())
	snap, _, _ := store.Latest()
	sums := snap.Operator(New(Options{}).opID(func(env *Env) { keyedSums(env, newGated(ints(n)), n, t.TempDir(), nil) }, "sums"))
	if sums == nil {
		t.Fatal("the checkpoint has no state of the Sum")
	}
	run := func(allow bool) ([]string, error) {
		dir := t.TempDir()
		src := newGated(ints(n))
		src.open()
		env := New(Options{Parallelism: 1, Restore: snap, AllowNonRestoredState: allow})
		// the program without the Sum: the numbers, printed
		ds := FromSource(env, src, watermark.NoWatermarks[int](), "numbers").UID("numbers")
		SinkTo(Map(ds, func(v int) string { return fmt.Sprint(v) }), sink.Text(dir))
		_, err := env.Execute(context.Background())
		c, _ := dirState(t, dir)
		return c, err
	}
	_, err := run(false)
	want := fmt.Sprintf(`restore from checkpoint %d: the snapshot has state of operator "Sum" (id %s), which the program does not have; give the operator its uid again, or set AllowNonRestoredState (--allow-non-restored-state) to skip this state`, snap.ID, sums.ID)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
	got, err := run(true)
	if err != nil {
		t.Fatal(err)
	}
	// the source resumes where the checkpoint left it: the records it had
	// read before are not read again
	if len(got) == 0 || len(got) >= n {
		t.Fatalf("restored source read %d of %d records", len(got), n)
	}
}

// opID returns the stable id of the node with uid in the program build
// makes.
func (e *Env) opID(build func(*Env), uid string) string {
	build(e)
	ids := e.operatorIDs()
	for _, nd := range e.nodes() {
		if nd.UID == uid {
			return ids[nd]
		}
	}
	return ""
}

// TestRestoreMaxParallelism: a keyed operator's state restores into a
// program that did not set the max parallelism (it takes the
// checkpoint's), and fails with Flink's message where the program set
// another (StateAssignmentOperation.checkParallelismPreconditions).
func TestRestoreMaxParallelism(t *testing.T) {
	const n = 100
	dir := t.TempDir()
	store := checkpointMidway(t, Options{MaxParallelism: 64}, n, dir)
	snap, _, _ := store.Latest()
	src := newGated(ints(n))
	src.open()
	env := New(Options{Parallelism: 3, MaxParallelism: 256, Restore: snap})
	keyedSums(env, src, n, t.TempDir(), nil)
	_, err := env.Execute(context.Background())
	if err == nil || !strings.Contains(err.Error(), "The maximum parallelism (64) with which the latest checkpoint of the execution job vertex Sum has been taken and the current maximum parallelism (256) changed. This is currently not supported.") {
		t.Fatalf("err = %v", err)
	}
	env = New(Options{Parallelism: 3, Restore: snap})
	keyedSums(env, src, n, dir, nil)
	if _, err := env.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c, h := dirState(t, dir); !slices.Equal(c, sumsOracle(n)) || len(h) != 0 {
		t.Fatalf("committed %d lines (hidden %v), want the %d of an uninterrupted run", len(c), h, n)
	}
}

// TestRestoreFinished: a job whose storage's latest snapshot is a finished
// job's does nothing and succeeds (FLIP-147).
func TestRestoreFinished(t *testing.T) {
	store := checkpoint.NewMemory(1)
	if _, err := store.Store(&checkpoint.Snapshot{ID: 3, Finished: true}); err != nil {
		t.Fatal(err)
	}
	env := New(Options{Parallelism: 1})
	env.EnableCheckpointing(time.Hour).Storage = store
	out := Collect(FromSlice(env, []int{1, 2, 3}))
	if _, err := env.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := out.Values(); len(got) != 0 {
		t.Fatalf("a finished job ran again: %v", got)
	}
}

// TestCheckpointPeriodicAndTimeout: checkpoints trigger on the interval of
// the job's clock; one whose barrier cannot pass a task expires after the
// timeout, and the next completes.
func TestCheckpointPeriodicAndTimeout(t *testing.T) {
	clock := manual()
	src := newGated(ints(100))
	env := New(Options{Parallelism: 1, Clock: clock})
	cfg := env.EnableCheckpointing(time.Minute)
	cfg.Timeout = 5 * time.Minute
	cfg.TolerableFailures = 1 // the expired checkpoint
	hold, held := make(chan struct{}), make(chan struct{})
	var seen int
	ds := Map(FromSource(env, src, watermark.NoWatermarks[int](), "numbers").Rebalance(), func(v int) int {
		if seen++; seen == 3 {
			close(held)
			<-hold
		}
		return v
	})
	Collect(ds)
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	src.release(2)
	clock.Advance(time.Minute)
	waitUntil(t, "the periodic checkpoint", func() bool { return len(j.Checkpoints().Completed) == 1 })
	src.release(1)
	<-held // the map holds its task: the next barrier waits behind it
	res := make(chan error, 1)
	go func() { _, err := j.TriggerCheckpoint(context.Background()); res <- err }()
	waitUntil(t, "checkpoint 2 pending", func() bool {
		return slices.Contains(j.j.Coordinator().Pending(), 2)
	})
	clock.Advance(6 * time.Minute)
	if err := <-res; !errors.Is(err, coordinator.ErrAborted) || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("err = %v, want an expired checkpoint", err)
	}
	close(hold)
	// the interval passed too: checkpoint 3 was triggered once 2 expired
	waitUntil(t, "the next checkpoint", func() bool { return len(j.Checkpoints().Completed) == 2 })
	if h := j.Checkpoints(); h.Completed[0].ID != 1 || h.Completed[1].ID != 3 {
		t.Fatalf("completed %+v, want checkpoints 1 and 3", h.Completed)
	}
	j.Cancel()
	j.Wait()
}

// TestExplicitRestoreWinsOverStorage: a job given Options.Restore (a
// savepoint) restores it even when its checkpoint storage holds a newer,
// finished checkpoint of another run, and the checkpoints it then takes
// follow that run's ids; the storage's old checkpoint is never restored.
func TestExplicitRestoreWinsOverStorage(t *testing.T) {
	const n = 50
	store := checkpoint.NewMemory(2)
	build := func(src *gated[int], restore *checkpoint.Snapshot) (*Env, *Collected[kv]) {
		env := New(Options{Parallelism: 1, Clock: manual(), Restore: restore, Restart: NoRestart()})
		env.EnableCheckpointing(time.Hour).Storage = store
		return env, asyncSums(env, src, n, nil, nil)
	}
	// a savepoint after 20 numbers
	src := newGated(ints(n))
	env, _ := build(src, nil)
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	src.release(20)
	waitUntil(t, "20 numbers read", func() bool { return src.readers.Load() > 0 && len(src.permits) == 0 })
	if _, err := j.TriggerCheckpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	savepoint, _, _ := store.Latest()
	j.Cancel()
	j.Wait()
	// another run of the job to its end: the storage's latest is finished
	src2 := newGated(ints(n))
	src2.open()
	env2, _ := build(src2, nil)
	if _, err := env2.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s, _, _ := store.Latest(); s == nil || !s.Finished {
		t.Fatalf("latest %+v, want the finished run's", s)
	}
	finished, _, _ := store.Latest()
	// the savepoint wins: the sums go on from the 20 numbers it holds
	src3 := newGated(ints(n))
	src3.open()
	env3, out := build(src3, savepoint)
	if _, err := env3.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	total := map[int]int{}
	for v := range n {
		total[keyOf(v, n)] += v
	}
	got := map[int]int{}
	for _, s := range out.Values() {
		got[s.K] = max(got[s.K], s.V)
	}
	if fmt.Sprint(got) != fmt.Sprint(total) || len(out.Values()) != n-20 {
		t.Fatalf("%d sums ending at %v after restoring the savepoint, want %d ending at the totals %v", len(out.Values()), got, n-20, total)
	}
	if s, _, _ := store.Latest(); s == nil || s.ID <= finished.ID {
		t.Fatalf("latest %+v: the restored job's checkpoints do not follow the storage's ids (%d)", s, finished.ID)
	}
}

// TestRestoreOtherKind: the state of an operator never restores into an
// operator of another kind that took its id (here by its uid): the
// restore fails, unrecoverable, naming both operators.
func TestRestoreOtherKind(t *testing.T) {
	const n = 100
	store := checkpointMidway(t, Options{}, n, t.TempDir())
	snap, _, _ := store.Latest()
	src := newGated(ints(n))
	src.open()
	env := New(Options{Parallelism: 1, Restore: snap, Restart: NoRestart()})
	ds := FromSource(env, src, watermark.NoWatermarks[int](), "numbers").UID("numbers")
	maxes := KeyBy(ds, func(v int) int { return v % 3 }).Reduce(func(a, b int) int { return max(a, b) }).UID("sums")
	SinkTo(Map(maxes, func(v int) string { return fmt.Sprint(v) }), sink.Text(t.TempDir()))
	_, err := env.Execute(context.Background())
	if err == nil || !IsUnrecoverable(err) || !strings.Contains(err.Error(), `is a Reduce, but the snapshot holds the state of a Sum named "Sum" under its id`) ||
		!strings.Contains(err.Error(), `operator "Reduce" (uid "sums", id `) {
		t.Fatalf("err = %v", err)
	}
}
