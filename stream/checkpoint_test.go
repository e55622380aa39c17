package stream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirdata/weir/clock"
	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/state"
	"github.com/weirdata/weir/stream/watermark"
)

// gated is a source whose readers read a record only against a permit
// (open lets every read through; a read that brings no record, the end of
// a split, gives its permit back) and that reports each snapshot of a
// reader's positions, so a test knows where a barrier falls.
type gated[T any] struct {
	source.Source[T]
	permits chan struct{}
	snapped chan struct{}
	once    sync.Once
	mu      sync.Mutex // guards opened against giveBack
	opened  bool
	// onSnapshot, when set, runs in the source task at each snapshot of a
	// reader's positions
	onSnapshot func()
	readers    atomic.Int32 // readers made
}

func newGated[T any](items []T) *gated[T] {
	return &gated[T]{Source: source.FromSlice(items, source.BatchSize(1)), permits: make(chan struct{}, 1<<16),
		snapped: make(chan struct{}, 64)}
}

func (g *gated[T]) release(n int) {
	for range n {
		g.permits <- struct{}{}
	}
}

func (g *gated[T]) open() {
	g.once.Do(func() {
		g.mu.Lock()
		g.opened = true
		close(g.permits)
		g.mu.Unlock()
	})
}

// giveBack returns a permit that a read spent on no record.
func (g *gated[T]) giveBack() {
	g.mu.Lock()
	if !g.opened {
		g.permits <- struct{}{}
	}
	g.mu.Unlock()
}

func (g *gated[T]) Reader(rc source.ReaderContext) (source.Reader[T], error) {
	g.readers.Add(1)
	r, err := g.Source.Reader(rc)
	return &gatedReader[T]{Reader: r, g: g}, err
}

type gatedReader[T any] struct {
	source.Reader[T]
	g    *gated[T]
	held bool // a permit taken by a read that ended early
}

func (r *gatedReader[T]) Next(ctx context.Context) (source.Batch[T], error) {
	if !r.held {
		select {
		case <-r.g.permits:
		case <-ctx.Done():
			return source.Batch[T]{}, ctx.Err()
		}
		r.held = true
	}
	b, err := r.Reader.Next(ctx)
	if err == nil || !errors.Is(err, ctx.Err()) {
		r.held = false
		if len(b.Records) == 0 { // the end of a split or of the input: a permit is a record
			r.g.giveBack()
		}
	}
	return b, err
}

func (r *gatedReader[T]) Positions() []source.Split {
	if r.g.onSnapshot != nil {
		r.g.onSnapshot()
	}
	select {
	case r.g.snapped <- struct{}{}:
	default:
	}
	return r.Reader.Positions()
}

// blockingStorage is a Memory whose Store waits for release.
type blockingStorage struct {
	*checkpoint.Memory
	entered chan struct{}
	release chan struct{}
}

func (b *blockingStorage) Store(s *checkpoint.Snapshot) (string, error) {
	if !s.Finished {
		b.entered <- struct{}{}
		<-b.release
	}
	return b.Memory.Store(s)
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func manual() *clock.Manual { return clock.NewManual(time.UnixMilli(0)) }

type kv struct{ K, V int }

func keyOf(v, n int) int {
	if v >= n/2 {
		return v%5 + 5
	}
	return v % 5
}

// keyedSums is the test's program over the numbers 0..n-1: key keyOf (each
// key read by one source subtask, in order), a rolling Sum per key, lines
// "key:sum" into a FileSink in dir. fail, when set, is called per record
// before the keying.
func keyedSums(env *Env, src source.Source[int], n int, dir string, fail func(int) error) {
	ds := FromSource(env, src, watermark.NoWatermarks[int](), "numbers").UID("numbers")
	if fail != nil {
		ds = Process(ds, func() ProcessFunction[int, int] {
			return ProcessFunction[int, int]{ProcessElement: func(v int, _ *Context, out Collector[int]) error {
				if err := fail(v); err != nil {
					return err
				}
				out.Collect(v)
				return nil
			}}
		})
	}
	pairs := Map(ds, func(v int) kv { return kv{keyOf(v, n), v} })
	sums := Sum(KeyBy(pairs, func(p kv) int { return p.K }), func(p kv) int { return p.V }, func(p *kv, v int) { p.V = v }).UID("sums")
	SinkTo(Map(sums, func(p kv) string { return fmt.Sprintf("%d:%d", p.K, p.V) }), sink.Text(dir))
}

// sumsOracle is the sorted lines an uninterrupted run of keyedSums writes.
func sumsOracle(n int) []string {
	acc := map[int]int{}
	var out []string
	for v := range n {
		k := keyOf(v, n)
		acc[k] += v
		out = append(out, fmt.Sprintf("%d:%d", k, acc[k]))
	}
	slices.Sort(out)
	return out
}

func ints(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// TestCheckpointRestoreExact: a job checkpoints while its source has read
// 40 of 100 numbers, reads more and is cancelled; a job restored from the
// storage at parallelism 1, 2 and 3 (rescaling the keyed Sum by key groups
// and the source's splits) commits, with what the first job committed,
// exactly the lines of an uninterrupted run: no loss, no duplicates.
//
// The storage is a Memory, or a checkpoint.Dir that the second job opens
// anew, as the same command run again after a process crash. The keyed
// state is on the heap or on disk, with full or incremental checkpoints,
// and a full checkpoint taken on one backend restores on the other.
func TestCheckpointRestoreExact(t *testing.T) {
	const n = 100
	backends := []backendCase{
		{"heap", HeapBackend, HeapBackend, false},
		{"disk", DiskBackend, DiskBackend, false},
	}
	for _, kind := range []string{"memory", "dir"} {
		cases := backends
		if kind == "dir" {
			cases = append(cases, backendCase{"disk-incremental", DiskBackend, DiskBackend, true},
				backendCase{"disk-to-heap", DiskBackend, HeapBackend, false}, backendCase{"heap-to-disk", HeapBackend, DiskBackend, false})
		}
		for _, be := range cases {
			for _, p2 := range []int{1, 2, 3} {
				t.Run(fmt.Sprint(kind, "/", be.name, "/2to", p2), func(t *testing.T) {
					restoreExact(t, kind, n, p2, be)
				})
			}
		}
	}
}

// backendCase is the state backend of a job and of the job restored from
// its checkpoint.
type backendCase struct {
	name          string
	first, second StateBackend
	incremental   bool
}

func restoreExact(t *testing.T, kind string, n, p2 int, be backendCase) {
	dir, chk, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	openDir := func() checkpoint.Storage {
		d, err := checkpoint.OpenDir(chk, checkpoint.DirOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	}
	var store checkpoint.Storage = checkpoint.NewMemory(1)
	if kind == "dir" {
		store = openDir()
	}
	src := newGated(ints(n))
	env := New(Options{Parallelism: 2, Clock: manual(), StateBackend: be.first, Incremental: be.incremental, TmpDir: tmp})
	env.EnableCheckpointing(time.Hour).Storage = store
	keyedSums(env, src, n, dir, nil)
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	src.release(40)
	waitUntil(t, "40 records read", func() bool { return sourceOut(j) >= 40 })
	id, err := j.TriggerCheckpoint(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	src.release(20)
	j.Cancel()
	if _, err := j.Wait(); err == nil {
		t.Fatal("the cancelled job succeeded")
	}
	s, _, _ := store.Latest()
	if s == nil || s.ID != id || s.Operator(env.operatorIDs()[env.nodes()[0]]) == nil {
		t.Fatalf("latest snapshot %+v, want checkpoint %d with the source", s, id)
	}
	var sums *checkpoint.OperatorState
	for _, nd := range env.nodes() {
		if nd.UID == "sums" {
			sums = s.Operator(env.operatorIDs()[nd])
		}
	}
	if sums == nil {
		t.Fatal("no state of the sums")
	}
	for i, st := range sums.Subtasks {
		if inc := state.IsIncremental(st.State); inc != be.incremental || (inc && len(st.Shared) == 0) {
			t.Fatalf("subtask %d: incremental %v naming shared files %v, want incremental %v", i, inc, st.Shared, be.incremental)
		}
	}
	// The statistics: the inline bytes plus the shared files' lengths on
	// disk; the first checkpoint added every shared file it names.
	full := s.Size()
	for _, op := range s.Operators {
		for _, st := range op.Subtasks {
			for _, name := range st.Shared {
				fi, err := os.Stat(store.(*checkpoint.Dir).SharedPath(name))
				if err != nil {
					t.Fatal(err)
				}
				full += fi.Size()
			}
		}
	}
	if cs := j.Checkpoints().Completed; len(cs) != 1 || cs[0].FullSize != full || cs[0].Size != full {
		t.Fatalf("checkpoint statistics %+v, want one of size and full size %d", cs, full)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Fatalf("the cancelled job left %v in its temporary directory", left)
	}

	if kind == "dir" {
		store.(*checkpoint.Dir).Close() // the first job ended
		store = openDir()
	}
	env2 := New(Options{Parallelism: p2, Clock: manual(), StateBackend: be.second, Incremental: be.incremental, TmpDir: tmp})
	env2.EnableCheckpointing(time.Hour).Storage = store
	src2 := newGated(ints(n))
	src2.open()
	keyedSums(env2, src2, n, dir, nil)
	if _, err := env2.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c, h := dirState(t, dir); !slices.Equal(c, sumsOracle(n)) || len(h) != 0 {
		t.Fatalf("committed %d lines (hidden %v), want the %d of an uninterrupted run", len(c), h, n)
	}
	if s, _, _ := store.Latest(); s == nil || !s.Finished {
		t.Fatalf("latest snapshot %+v, want the finished one", s)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Fatalf("the job left %v in its temporary directory", left)
	}
}

// TestCheckpointFailover: a task fails once at a chosen record after a
// checkpoint completed; the job restarts from it within the same Execute
// (fixed-delay restarts) and commits exactly the lines of an uninterrupted
// run, at parallelism 1 and 2, with the keyed state on the heap and on
// disk with incremental checkpoints in a checkpoint.Dir.
func TestCheckpointFailover(t *testing.T) {
	const n = 200
	for _, p := range []int{1, 2} {
		for _, onDisk := range []bool{false, true} {
			t.Run(fmt.Sprint("p", p, "/disk=", onDisk), func(t *testing.T) { failover(t, n, p, onDisk) })
		}
	}
}

func failover(t *testing.T, n, p int, onDisk bool) {
	dir := t.TempDir()
	src := newGated(ints(n))
	opts := Options{Parallelism: p, Clock: manual(), Restart: FixedDelayRestart(2, 0)}
	var store checkpoint.Storage = checkpoint.NewMemory(1)
	if onDisk {
		d, err := checkpoint.OpenDir(t.TempDir(), checkpoint.DirOptions{})
		if err != nil {
			t.Fatal(err)
		}
		opts.StateBackend, opts.Incremental, opts.TmpDir, store = DiskBackend, true, t.TempDir(), d
	}
	env := New(opts)
	env.EnableCheckpointing(time.Hour).Storage = store
	var failed atomic.Bool
	keyedSums(env, src, n, dir, func(v int) error {
		if v == 190 && failed.CompareAndSwap(false, true) {
			return errors.New("injected failure")
		}
		return nil
	})
	var jobs = make(chan *Job, 1)
	env.opts.Started = func(j *Job) { jobs <- j }
	done := make(chan error, 1)
	go func() {
		_, err := env.Execute(context.Background())
		done <- err
	}()
	j := <-jobs
	src.release(60)
	if _, err := j.TriggerCheckpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	src.open()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !failed.Load() {
		t.Fatal("the failure was not injected")
	}
	h := j.Checkpoints()
	if h.Restarts != 1 || len(h.Restores) != 1 || len(h.Completed) != 1 {
		t.Fatalf("history %+v: want one restart restored from one checkpoint", h)
	}
	if c, hid := dirState(t, dir); !slices.Equal(c, sumsOracle(n)) || len(hid) != 0 {
		t.Fatalf("committed %d lines (hidden %v), want the %d of an uninterrupted run", len(c), hid, n)
	}
	if left, _ := os.ReadDir(opts.TmpDir); onDisk && len(left) != 0 {
		t.Fatalf("the failed and the restarted attempt left %v in the temporary directory", left)
	}
}

// TestCheckpointStoreOffTask: while the storage holds a checkpoint's Store,
// records keep flowing through the tasks; the file sink commits the
// checkpoint's records only once Store returned and the completion reached
// it, and exactly those.
func TestCheckpointStoreOffTask(t *testing.T) {
	dir := t.TempDir()
	bs := &blockingStorage{Memory: checkpoint.NewMemory(1), entered: make(chan struct{}), release: make(chan struct{})}
	src := newGated(ints(1000))
	env := New(Options{Parallelism: 1, Clock: manual()})
	env.EnableCheckpointing(time.Hour).Storage = bs
	var seen atomic.Int64
	ds := FromSource(env, src, watermark.NoWatermarks[int](), "numbers")
	ds = Map(ds, func(v int) int { seen.Add(1); return v }).Rebalance()
	SinkTo(Map(ds, strconv.Itoa), sink.Text(dir))
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	src.release(10)
	waitUntil(t, "10 records", func() bool { return seen.Load() == 10 })
	res := make(chan error, 1)
	go func() { _, err := j.TriggerCheckpoint(context.Background()); res <- err }()
	<-bs.entered
	src.release(15)
	waitUntil(t, "records while the checkpoint is stored", func() bool { return seen.Load() == 25 })
	if c, _ := dirState(t, dir); len(c) != 0 {
		t.Fatalf("committed %v before the checkpoint completed", c)
	}
	close(bs.release)
	if err := <-res; err != nil {
		t.Fatal(err)
	}
	want := make([]string, 10)
	for i := range want {
		want[i] = strconv.Itoa(i)
	}
	slices.Sort(want)
	waitUntil(t, "the commit", func() bool { c, _ := dirState(t, dir); return len(c) > 0 })
	if c, _ := dirState(t, dir); !slices.Equal(c, want) {
		t.Fatalf("committed %v, want %v", c, want)
	}
	h := j.Checkpoints()
	if len(h.Completed) != 1 || h.Completed[0].Size == 0 {
		t.Fatalf("checkpoints %+v", h.Completed)
	}
	j.Cancel()
	j.Wait()
}

// TestCheckpointAlignment: a keyed Sum reads a fast source and a slow one
// (a map holds the slow one's records); after the fast one's barrier it
// sends 10 more records. Exactly-once alignment holds them back, so the
// checkpoint's state is exactly the records before the barriers and a job
// restored from it ends with every key's sum the total. At-least-once lets
// them through before the checkpoint (the test waits until they passed),
// so the restored job counts them twice: no loss, and exactly those
// duplicates.
//
// Unaligned checkpoints let them through too (the union task snapshots on
// the fast barrier and persists the slow input's records until its
// barrier as channel state), and the restored job is exact. With an
// aligned-checkpoint timeout the task aligns until the timeout passes on
// the job's clock, then switches to unaligned and lets them through.
func TestCheckpointAlignment(t *testing.T) {
	for _, c := range []struct {
		name    string
		mode    CheckpointingMode
		timeout time.Duration // -1: aligned
	}{
		{"EXACTLY_ONCE", ExactlyOnce, -1},
		{"AT_LEAST_ONCE", AtLeastOnce, -1},
		{"UNALIGNED", ExactlyOnce, 0},
		{"UNALIGNED_AFTER_TIMEOUT", ExactlyOnce, time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkAlignment(t, c.mode, c.timeout)
		})
	}
}

func checkAlignment(t *testing.T, mode CheckpointingMode, timeout time.Duration) {
	const n = 40
	dir := t.TempDir()
	store := checkpoint.NewMemory(1)
	var fastSeen, slowSeen atomic.Int64
	clock := manual()
	run := func(fast, slow *gated[int], hold chan struct{}) *Env {
		env := New(Options{Parallelism: 1, Clock: clock, Restart: NoRestart()})
		cfg := env.EnableCheckpointing(time.Hour)
		cfg.Storage, cfg.Mode = store, mode
		cfg.Unaligned, cfg.AlignedCheckpointTimeout = timeout >= 0, max(timeout, 0)
		a := FromSource(env, fast, watermark.NoWatermarks[int](), "fast").UID("fast")
		b := FromSource(env, slow, watermark.NoWatermarks[int](), "slow").UID("slow")
		b = Map(b, func(v int) int { slowSeen.Add(1); return v })
		var seen int
		b = Map(b.Rebalance(), func(v int) int {
			if seen++; seen == 5 && hold != nil {
				<-hold
			}
			return v + n
		}).UID("hold")
		all := Map(a.Union(b), func(v int) kv {
			if v < n {
				fastSeen.Add(1)
			}
			return kv{v % 3, v}
		})
		sums := Sum(KeyBy(all, func(p kv) int { return p.K }), func(p kv) int { return p.V }, func(p *kv, v int) { p.V = v }).UID("sums")
		SinkTo(Map(sums, func(p kv) string { return fmt.Sprintf("%d:%d", p.K, p.V) }), sink.Text(dir))
		return env
	}
	fast, slow, hold := newGated(ints(n)), newGated(ints(n)), make(chan struct{})
	env := run(fast, slow, hold)
	j, err := env.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fast.release(10)
	slow.release(10)
	// the barriers follow exactly the released records: the sources
	// emitted them before the trigger
	waitUntil(t, "the records before the barriers", func() bool { return fastSeen.Load() == 10 && slowSeen.Load() == 10 })
	res := make(chan error, 1)
	go func() { _, err := j.TriggerCheckpoint(context.Background()); res <- err }()
	<-fast.snapped
	<-slow.snapped
	fast.release(10) // after the fast source's barrier
	if timeout > 0 {
		time.Sleep(10 * time.Millisecond) // a chance for them to pass, which alignment denies
		if s := fastSeen.Load(); s != 10 {
			t.Fatalf("%d fast records passed before the alignment timed out, want 10", s)
		}
		clock.Advance(timeout)
	}
	if mode == AtLeastOnce || timeout >= 0 {
		waitUntil(t, "the fast records after the barrier", func() bool { return fastSeen.Load() == 20 })
	} else {
		time.Sleep(10 * time.Millisecond) // a chance for them to pass, which alignment denies
	}
	close(hold)
	if err := <-res; err != nil {
		t.Fatal(err)
	}
	j.Cancel()
	j.Wait()

	fast2, slow2 := newGated(ints(n)), newGated(ints(n))
	fast2.open()
	slow2.open()
	if _, err := run(fast2, slow2, nil).Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	total := map[int]int{}
	lines := 2 * n
	for v := range n {
		total[v%3] += v
		total[(v+n)%3] += v + n
	}
	if mode == AtLeastOnce {
		for v := 10; v < 20; v++ {
			total[v%3] += v
		}
		lines += 10
	}
	c, _ := dirState(t, dir)
	final := map[int]int{}
	for _, l := range c {
		k, v, _ := strings.Cut(l, ":")
		ki, _ := strconv.Atoi(k)
		vi, _ := strconv.Atoi(v)
		final[ki] = max(final[ki], vi)
	}
	if len(c) != lines || fmt.Sprint(final) != fmt.Sprint(total) {
		t.Fatalf("%d lines, final sums %v, want %d lines and %v", len(c), final, lines, total)
	}
}
