package disk_test

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/state"
)

// job is keyed state spread over parallel disk backends, with a heap
// backend over every key group as the oracle.
type job struct {
	e      *env
	oracle *side
	subs   []*side
	ks     []string
	rng    *rand.Rand
}

func newJob(t *testing.T, e *env, p int) *job {
	all := state.KeyGroupRange{Start: 0, End: e.maxP - 1}
	j := &job{e: e, oracle: e.side(false, all), ks: keys(60), rng: rand.New(rand.NewPCG(7, 7))}
	for i := range p {
		j.subs = append(j.subs, e.side(true, groupsOf(t, e.maxP, p, i)))
	}
	return j
}

func groupsOf(t *testing.T, maxP, p, i int) state.KeyGroupRange {
	g, err := state.RangeForOperatorIndex(maxP, p, i)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// owner returns the side owning key.
func owner(subs []*side, key string) *side {
	for _, s := range subs {
		if s.b.Groups().Contains(s.b.KeyGroup(key)) {
			return s
		}
	}
	return nil
}

// run applies n random writes (no TTL states, whose reads change them) to
// the oracle and to the owning subtasks.
func (j *job) run(t *testing.T, n int) {
	writes := []int{0, 2, 3, 4, 5, 7, 8, 9, 11, 13, 14, 15, 17, 18, 20, 21, 22}
	for range n {
		op, key, ns := writes[j.rng.IntN(len(writes))], j.ks[j.rng.IntN(len(j.ks))], j.rng.IntN(4)
		seed := j.rng.Uint64()
		j.oracle.op(op, rand.New(rand.NewPCG(seed, 0)), key, ns)
		owner(j.subs, key).op(op, rand.New(rand.NewPCG(seed, 0)), key, ns)
	}
	for _, s := range j.subs {
		if err := s.b.Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// check compares every key's state on its owner with the oracle.
func (j *job) check(t *testing.T, what string, subs []*side) {
	t.Helper()
	same(t, what, j.ks, j.oracle.read, func(k string, ns int) any { return owner(subs, k).read(k, ns) })
}

// snapshot takes an incremental snapshot of every subtask and returns them
// with the shared files each names.
func (j *job) snapshot(t *testing.T) ([][]byte, [][]string) {
	var snaps [][]byte
	var shared [][]string
	for _, s := range j.subs {
		var buf bytes.Buffer
		names, err := s.b.SnapshotIncremental(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if !state.IsIncremental(buf.Bytes()) {
			t.Fatal("not an incremental snapshot")
		}
		named, err := state.SharedFilesOf(buf.Bytes())
		if err != nil || !slices.Equal(named, names) {
			t.Fatalf("SharedFilesOf = %v, %v; SnapshotIncremental named %v", named, err, names)
		}
		snaps, shared = append(snaps, buf.Bytes()), append(shared, names)
	}
	return snaps, shared
}

// restore restores snaps at parallelism p, each new subtask reading every
// snapshot whose groups overlap its own, as the stream runtime does.
func (j *job) restore(t *testing.T, snaps [][]byte, p int) []*side {
	old := len(snaps)
	var out []*side
	for i := range p {
		mine := groupsOf(t, j.e.maxP, p, i)
		b := j.e.backend(true, mine)
		for o, snap := range snaps {
			if groupsOf(t, j.e.maxP, old, o).Intersect(mine).Len() > 0 {
				if err := b.Restore(bytes.NewReader(snap)); err != nil {
					t.Fatal(err)
				}
			}
		}
		out = append(out, j.e.register(b))
	}
	return out
}

func openDir(t testing.TB, retained int) *checkpoint.Dir {
	d, err := checkpoint.OpenDir(t.TempDir(), checkpoint.DirOptions{Retained: retained})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestIncrementalRestore restores incremental snapshots at the same
// parallelism, at 1 and at 3 from 2 (RocksDBIncrementalRestoreOperation:
// the whole database, or the owned key groups clipped out of each).
func TestIncrementalRestore(t *testing.T) {
	for _, p := range []int{2, 1, 3} {
		e := newEnv(t, 16, 0)
		e.shared = openDir(t, 1)
		j := newJob(t, e, 2)
		j.run(t, 3000)
		snaps, _ := j.snapshot(t)
		j.run(t, 500) // after the snapshot: not restored
		restored := j.restore(t, snaps, p)
		e2 := newEnv(t, 16, 0)
		e2.shared = e.shared
		// the oracle of the snapshot: the writes replayed up to it
		k := newJob(t, e2, 1)
		k.rng = rand.New(rand.NewPCG(7, 7))
		k.run(t, 3000)
		k.check(t, "restored", restored)
		// the restored backends go on and snapshot again
		k.subs = restored
		k.run(t, 500)
		k.check(t, "after restore", restored)
		snaps2, _ := k.snapshot(t)
		k.check(t, "restored twice", k.restore(t, snaps2, 2))
	}
}

// TestIncrementalSharesFiles checks that incremental checkpoints in a
// checkpoint.Dir keeping 2 name the data files of earlier ones instead of
// writing them again, and that a shared file is deleted once no retained
// checkpoint names it.
func TestIncrementalSharesFiles(t *testing.T) {
	d := openDir(t, 2)
	e := newEnv(t, 16, 0)
	e.shared = d
	j := newJob(t, e, 1)
	var named [][]string
	reused := false
	for id := int64(1); id <= 5; id++ {
		j.run(t, 1500)
		snaps, shared := j.snapshot(t)
		if id > 1 {
			for _, f := range shared[0] {
				reused = reused || slices.Contains(named[len(named)-1], f)
			}
		}
		named = append(named, shared[0])
		s := &checkpoint.Snapshot{ID: id, Operators: []checkpoint.OperatorState{{ID: "op", Parallelism: 1, MaxParallelism: 16,
			Subtasks: []checkpoint.SubtaskState{{State: snaps[0], Shared: shared[0]}}}}}
		if _, err := d.Store(s); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, n := range named[max(0, len(named)-2):] {
			for _, f := range n {
				if !slices.Contains(want, f) {
					want = append(want, f)
				}
			}
		}
		slices.Sort(want)
		ents, err := os.ReadDir(filepath.Join(d.Path(), "shared"))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, en := range ents {
			got = append(got, en.Name())
		}
		if !slices.Equal(got, want) {
			t.Fatalf("checkpoint %d: shared files %v, want those of the 2 retained checkpoints %v", id, got, want)
		}
	}
	if !reused {
		t.Fatal("no checkpoint named a data file of the one before")
	}
	gone := false
	for _, f := range named[0] {
		if _, err := os.Stat(d.SharedPath(f)); os.IsNotExist(err) {
			gone = true
		}
	}
	if !gone {
		t.Fatalf("every data file of checkpoint 1 is still there: %v", named[0])
	}
	latest, _, err := d.Latest()
	if err != nil {
		t.Fatal(err)
	}
	j.check(t, "latest", j.restore(t, [][]byte{latest.Operators[0].Subtasks[0].State}, 1))
}

// TestDescribeIncremental: DescribeSnapshot lists an incremental
// snapshot's states and files, the shared ones those SnapshotIncremental
// named.
func TestDescribeIncremental(t *testing.T) {
	e := newEnv(t, 16, 0)
	e.shared = openDir(t, 1)
	j := newJob(t, e, 1)
	j.run(t, 500)
	snaps, shared := j.snapshot(t)
	info, err := state.DescribeSnapshot(snaps[0])
	if err != nil {
		t.Fatal(err)
	}
	var stored, named []string
	for _, s := range info.Stored {
		stored = append(stored, s.Name+" "+s.Kind)
	}
	for _, f := range info.Files {
		if f.Shared != "" {
			named = append(named, f.Shared)
		}
	}
	want := []string{"a AggregatingState", "l ListState", "m MapState", "r ReducingState", "tl ListState", "tm MapState", "tv ValueState", "v ValueState", "vv ValueState"}
	if !info.Incremental || info.MaxParallelism != 16 || !slices.Equal(stored, want) || !slices.Equal(named, shared[0]) || len(named) == 0 {
		t.Fatalf("described %+v: states %v, shared %v; want %v, %v", info, stored, named, want, shared[0])
	}
}

// TestIncrementalOnHeap: an incremental snapshot does not restore into a
// heap backend, which has no store to put its files in.
func TestIncrementalOnHeap(t *testing.T) {
	e := newEnv(t, 16, 0)
	e.shared = openDir(t, 1)
	j := newJob(t, e, 1)
	j.run(t, 100)
	snaps, _ := j.snapshot(t)
	b := e.backend(false, state.KeyGroupRange{Start: 0, End: 15})
	if err := b.Restore(bytes.NewReader(snaps[0])); err == nil || !strings.Contains(err.Error(), "restores into a disk backend") {
		t.Fatalf("restore on the heap: %v", err)
	}
}
