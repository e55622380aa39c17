package sortjoin

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
	"github.com/weirdata/weir/spill"
)

// sortInput is one named input of the sorter tests.
type sortInput struct {
	name  string
	recs  []Record
	large bool // records larger than a 4 KiB segment
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

// sortInputs returns the inputs every sorter configuration is tested on.
func sortInputs(seed uint64) []sortInput {
	r := rand.New(rand.NewPCG(seed, 7))
	var in []sortInput
	in = append(in, sortInput{name: "empty"})
	in = append(in, sortInput{name: "one", recs: []Record{{Key: []byte("k"), Val: []byte("v")}}})

	random := make([]Record, 3000)
	for i := range random {
		random[i] = Record{Key: randBytes(r, r.IntN(25)), Val: randBytes(r, r.IntN(41))}
	}
	in = append(in, sortInput{name: "random", recs: random})

	equal := make([]Record, 2000)
	for i := range equal {
		equal[i] = Record{Key: []byte("same key"), Val: binary.BigEndian.AppendUint32(nil, uint32(i))}
	}
	in = append(in, sortInput{name: "all-equal", recs: equal})

	zipf := rand.NewZipf(r, 1.3, 1, 500)
	skewed := make([]Record, 3000)
	for i := range skewed {
		skewed[i] = Record{Key: memory.AppendUint64(nil, zipf.Uint64()), Val: binary.BigEndian.AppendUint32(nil, uint32(i))}
	}
	in = append(in, sortInput{name: "zipf", recs: skewed})

	// Keys sharing their 8-byte prefix, and short keys whose zero-padded prefixes
	// tie with longer ones ("ab" and "ab\x00").
	ties := make([]Record, 3000)
	for i := range ties {
		var k []byte
		switch r.IntN(3) {
		case 0:
			k = append([]byte("commonpf"), randBytes(r, r.IntN(9))...)
		case 1:
			k = append([]byte("ab"), make([]byte, r.IntN(4))...)
		default:
			k = append([]byte("commonp"), randBytes(r, r.IntN(3))...)
		}
		ties[i] = Record{Key: k, Val: randBytes(r, r.IntN(9))}
	}
	in = append(in, sortInput{name: "shared-prefix", recs: ties})

	large := make([]Record, 24)
	for i := range large {
		k := append([]byte("LARGEKEY"), randBytes(r, 5000+r.IntN(4000))...)
		large[i] = Record{Key: k, Val: randBytes(r, r.IntN(12000))}
	}
	large = append(large, random[:200]...)
	r.Shuffle(len(large), func(i, j int) { large[i], large[j] = large[j], large[i] })
	in = append(in, sortInput{name: "larger-than-segment", recs: large, large: true})
	return in
}

// sortConfig is one memory and fan-in setting.
type sortConfig struct {
	name   string
	mem    memory.Options
	fanIn  int
	spills bool // the random input must spill
}

var sortConfigs = []sortConfig{
	{name: "unlimited", mem: memory.Options{}},
	{name: "tiny-fanin2", mem: memory.Options{SegmentSize: 4096, Budget: 4 * 4096}, fanIn: 2, spills: true},
	{name: "tiny-fanin3", mem: memory.Options{SegmentSize: 4096, Budget: 4 * 4096}, fanIn: 3, spills: true},
	{name: "small", mem: memory.Options{SegmentSize: 4096, Budget: 64 << 10}, spills: true},
	{name: "below-one-segment", mem: memory.Options{SegmentSize: 4096, Budget: 1000}, fanIn: 2, spills: true},
}

// testSpill makes small blocks so that spill files have many of them and readers
// and writers cost little memory.
var testSpill = spill.Options{Codec: spill.S2, BlockSize: 1024}

// sortEnv is a manager and a spill directory that a test checks at the end.
type sortEnv struct {
	resource.Env
	disk *spill.DiskFS
}

func newSortEnv(t testing.TB, mo memory.Options, so spill.Options) sortEnv {
	t.Helper()
	disk, err := spill.NewDiskFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return sortEnv{Env: resource.Env{Memory: memory.MustNewManager(mo), FS: disk, Spill: so}, disk: disk}
}

// check asserts that every reservation was released and every spill file removed.
func (e sortEnv) check(t testing.TB) {
	t.Helper()
	if err := e.Memory.Close(); err != nil {
		t.Errorf("manager: %v", err)
	}
	ents, err := os.ReadDir(e.disk.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, ent := range ents {
		t.Errorf("spill file left behind: %s", ent.Name())
	}
	if err := e.disk.Close(); err != nil {
		t.Errorf("disk close: %v", err)
	}
}

// sortAll adds recs to a new sorter and returns its output, copied.
func sortAll(t testing.TB, env resource.Env, opts SortOptions, recs []Record) ([]Record, SortStats) {
	t.Helper()
	s := NewSorter(env, opts)
	defer s.Close()
	for _, r := range recs {
		if err := s.Add(r.Key, r.Val); err != nil {
			t.Fatalf("Add: %v", err)
		}
	}
	it, err := s.Finish(context.Background())
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	defer it.Close()
	var out []Record
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		out = append(out, Record{Key: slices.Clone(k), Val: slices.Clone(v)})
	}
	if err := it.Err(); err != nil {
		t.Fatalf("Next: %v", err)
	}
	if err := it.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return out, s.Stats()
}

func compareRecords(a, b Record) int {
	if c := bytes.Compare(a.Key, b.Key); c != 0 {
		return c
	}
	return bytes.Compare(a.Val, b.Val)
}

// checkSorted compares out with the oracle: keys in bytes.Compare order and the
// same multiset of records as in.
func checkSorted(t testing.TB, in, out []Record) {
	t.Helper()
	if len(out) != len(in) {
		t.Fatalf("got %d records, want %d", len(out), len(in))
	}
	for i := 1; i < len(out); i++ {
		if bytes.Compare(out[i-1].Key, out[i].Key) > 0 {
			t.Fatalf("record %d: key %q after %q", i, out[i].Key, out[i-1].Key)
		}
	}
	want := slices.Clone(in)
	slices.SortFunc(want, compareRecords)
	got := slices.Clone(out)
	slices.SortFunc(got, compareRecords)
	for i := range want {
		if compareRecords(want[i], got[i]) != 0 {
			t.Fatalf("records differ at %d of the (key, value) order: got %q=%q, want %q=%q",
				i, got[i].Key, got[i].Val, want[i].Key, want[i].Val)
		}
	}
}

func TestSorterMatchesOracle(t *testing.T) {
	for _, cfg := range sortConfigs {
		for _, async := range []bool{false, true} {
			for _, in := range sortInputs(1) {
				name := fmt.Sprintf("%s/async=%v/%s", cfg.name, async, in.name)
				t.Run(name, func(t *testing.T) {
					env := newSortEnv(t, cfg.mem, testSpill)
					opts := SortOptions{Name: "sort-test", MaxFanIn: cfg.fanIn, Async: async}
					out, st := sortAll(t, env.Env, opts, in.recs)
					checkSorted(t, in.recs, out)
					if st.Records != int64(len(in.recs)) {
						t.Errorf("Stats.Records = %d, want %d", st.Records, len(in.recs))
					}
					switch {
					case cfg.spills && in.name == "random":
						if st.Runs < 3 {
							t.Errorf("Stats.Runs = %d, want several runs", st.Runs)
						}
						if cfg.fanIn > 0 && st.MergePasses == 0 {
							t.Errorf("Stats.MergePasses = 0 with fan-in %d and %d runs", cfg.fanIn, st.Runs)
						}
						if st.FanIn > max(cfg.fanIn, 2) && cfg.fanIn > 0 {
							t.Errorf("Stats.FanIn = %d above MaxFanIn %d", st.FanIn, cfg.fanIn)
						}
					case !cfg.spills:
						if st.Runs != 0 || st.SpilledBytes != 0 {
							t.Errorf("unlimited memory spilled: %+v", st)
						}
					}
					// The budget holds but for the documented minimum: a segment, an
					// index, one writer and two readers (records larger than a segment
					// force their own segments).
					if cfg.mem.Budget > 0 && !in.large {
						slack := int64(2*cfg.mem.SegmentSize) + 2*testSpill.WriterMemory() + 2*testSpill.ReaderMemory()
						if async {
							slack *= 2
						}
						if p := env.Memory.Peak(); p > max(cfg.mem.Budget, 0)+slack {
							t.Errorf("peak memory %d exceeds budget %d + minimum %d", p, cfg.mem.Budget, slack)
						}
					}
					env.check(t)
				})
			}
		}
	}
}

// TestSorterParallel runs several sorters at once, each on a hash partition of the
// input, sharing one manager and one spill directory.
func TestSorterParallel(t *testing.T) {
	const parts = 4
	for _, budget := range []int64{memory.Unlimited, 4 * 4096 * parts} {
		t.Run(fmt.Sprintf("budget=%d", budget), func(t *testing.T) {
			env := newSortEnv(t, memory.Options{SegmentSize: 4096, Budget: budget}, testSpill)
			var in [parts][]Record
			for _, input := range sortInputs(2) {
				for _, r := range input.recs {
					p := memory.Hash(r.Key, 0) % parts
					in[p] = append(in[p], r)
				}
			}
			var wg sync.WaitGroup
			var out [parts][]Record
			errs := make(chan error, parts)
			for p := range parts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					opts := SortOptions{Name: fmt.Sprintf("part%d", p), MaxFanIn: 2 + p, Async: p%2 == 1}
					if budget != memory.Unlimited {
						opts.Memory = budget / parts
					}
					var err error
					out[p], err = sortToSlice(env.Env, opts, in[p])
					errs <- err
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			for p := range parts {
				checkSorted(t, in[p], out[p])
			}
			env.check(t)
		})
	}
}

// sortToSlice is sortAll for goroutines: it returns errors instead of failing.
func sortToSlice(env resource.Env, opts SortOptions, recs []Record) ([]Record, error) {
	s := NewSorter(env, opts)
	defer s.Close()
	for _, r := range recs {
		if err := s.Add(r.Key, r.Val); err != nil {
			return nil, err
		}
	}
	it, err := s.Finish(context.Background())
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []Record
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		out = append(out, Record{Key: slices.Clone(k), Val: slices.Clone(v)})
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	return out, it.Close()
}

// manyRecords returns n records of random 16-byte keys and 16-byte values.
func manyRecords(seed uint64, n int) []Record {
	r := rand.New(rand.NewPCG(seed, 9))
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{Key: randBytes(r, 16), Val: randBytes(r, 16)}
	}
	return recs
}

var tinyMem = memory.Options{SegmentSize: 4096, Budget: 4 * 4096}

// countdownCtx is a context whose Err reports cancellation from its n-th call on,
// to cancel a sort at a chosen check deep inside a merge.
type countdownCtx struct {
	context.Context
	left atomic.Int64
}

func (c *countdownCtx) Err() error {
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

func TestSorterCancel(t *testing.T) {
	recs := manyRecords(3, 20000)
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("intermediate-merge/async=%v", async), func(t *testing.T) {
			env := newSortEnv(t, tinyMem, testSpill)
			s := NewSorter(env.Env, SortOptions{MaxFanIn: 2, Async: async})
			for _, r := range recs {
				if err := s.Add(r.Key, r.Val); err != nil {
					t.Fatal(err)
				}
			}
			ctx := &countdownCtx{Context: context.Background()}
			ctx.left.Store(2) // Finish's own check and the first check in a merge pass pass
			it, err := s.Finish(ctx)
			if err == nil {
				it.Close()
				t.Fatal("Finish succeeded with a context cancelled during the merge passes")
			}
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "merge") {
				t.Fatalf("Finish error %q does not report a cancelled merge", err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			env.check(t)
		})
		t.Run(fmt.Sprintf("final-merge/async=%v", async), func(t *testing.T) {
			env := newSortEnv(t, tinyMem, testSpill)
			s := NewSorter(env.Env, SortOptions{Async: async})
			defer s.Close()
			for _, r := range recs {
				if err := s.Add(r.Key, r.Val); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			it, err := s.Finish(ctx)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for {
				if _, _, ok := it.Next(); !ok {
					break
				}
				if n++; n == 100 {
					cancel()
				}
			}
			if !errors.Is(it.Err(), context.Canceled) {
				t.Fatalf("Err() = %v after cancelling, want context.Canceled", it.Err())
			}
			if n >= len(recs) {
				t.Fatalf("all %d records came out after cancelling", n)
			}
			if err := it.Close(); err != nil {
				t.Fatal(err)
			}
			env.check(t)
		})
	}
	t.Run("close-while-spilling", func(t *testing.T) {
		// Close while the background goroutine may be spilling: no leak, nothing left.
		for _, stopAt := range []int{1, 700, 5000, 19999} {
			env := newSortEnv(t, tinyMem, testSpill)
			s := NewSorter(env.Env, SortOptions{Async: true})
			for _, r := range recs[:stopAt] {
				if err := s.Add(r.Key, r.Val); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			if err := s.Add(nil, nil); err == nil {
				t.Fatal("Add after Close succeeded")
			}
			env.check(t)
		}
	})
}

func TestSorterFaults(t *testing.T) {
	recs := manyRecords(4, 8000)
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("write-during-spill/async=%v", async), func(t *testing.T) {
			env, faults := faultySortEnv(t)
			faults.FailNth(spill.OpWrite, 3)
			s := NewSorter(env.Env, SortOptions{Async: async})
			var err error
			for _, r := range recs {
				if err = s.Add(r.Key, r.Val); err != nil {
					break
				}
			}
			if err == nil {
				var it Iterator
				if it, err = s.Finish(context.Background()); err == nil {
					it.Close()
				}
			}
			if !errors.Is(err, spill.ErrInjected) || !strings.Contains(err.Error(), "run") || !strings.Contains(err.Error(), "write") {
				t.Fatalf("error %v does not name the failed run write", err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			env.check(t)
		})
		t.Run(fmt.Sprintf("read-during-merge/async=%v", async), func(t *testing.T) {
			env, faults := faultySortEnv(t)
			s := NewSorter(env.Env, SortOptions{Async: async, MaxFanIn: 3})
			defer s.Close()
			for _, r := range recs {
				if err := s.Add(r.Key, r.Val); err != nil {
					t.Fatal(err)
				}
			}
			faults.FailNth(spill.OpRead, 40)
			it, err := s.Finish(context.Background())
			if err == nil {
				for {
					if _, _, ok := it.Next(); !ok {
						break
					}
				}
				err = it.Err()
				if cerr := it.Close(); cerr != nil {
					t.Fatal(cerr)
				}
			}
			if !errors.Is(err, spill.ErrInjected) || !strings.Contains(err.Error(), "read") {
				t.Fatalf("error %v does not name the failed read", err)
			}
			env.check(t)
		})
	}
}

func TestSorterContract(t *testing.T) {
	env := newSortEnv(t, memory.Options{}, testSpill)
	s := NewSorter(env.Env, SortOptions{})
	if err := s.Add([]byte("b"), nil); err != nil {
		t.Fatal(err)
	}
	key := []byte("a")
	if err := s.Add(key, []byte("1")); err != nil {
		t.Fatal(err)
	}
	key[0] = 'z' // Add copied it
	it, err := s.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finish(context.Background()); err == nil {
		t.Error("second Finish succeeded")
	}
	if err := s.Add(nil, nil); err == nil {
		t.Error("Add after Finish succeeded")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	k, v, ok := it.Next()
	if !ok || string(k) != "a" || string(v) != "1" {
		t.Fatalf("first record %q=%q, %v; want a=1", k, v, ok)
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if err := it.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, _, ok := it.Next(); ok {
		t.Fatal("Next after Close returned a record")
	}
	env.check(t)
}

// TestSorterAddAllocs checks that Add allocates nothing in its steady state: after
// the first spill the buffer and its index are reused.
func TestSorterAddAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under the race detector are not the program's")
	}
	env := newSortEnv(t, memory.Options{SegmentSize: 4096, Budget: 256 << 10}, testSpill)
	s := NewSorter(env.Env, SortOptions{})
	defer s.Close()
	recs := manyRecords(5, 20000)
	i := 0
	for s.Stats().Runs == 0 {
		if err := s.Add(recs[i].Key, recs[i].Val); err != nil {
			t.Fatal(err)
		}
		i++
	}
	perRun := i
	// The buffer was just reset: AllocsPerRun's warm-up and measured call add a
	// third of a run each, which needs no spill and no growth.
	allocs := testing.AllocsPerRun(1, func() {
		for j := 0; j < perRun/3; j++ {
			r := recs[(i+j)%len(recs)]
			if err := s.Add(r.Key, r.Val); err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("%d adds allocated %v times", perRun/3, allocs)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	env.check(t)
}

// allocsOf returns the heap allocations f makes (all goroutines).
func allocsOf(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}

// TestMergeAllocs checks that iterating a merge of spilled runs allocates nothing
// per record.
func TestMergeAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under the race detector are not the program's")
	}
	env := newSortEnv(t, memory.Options{SegmentSize: 4096, Budget: 1 << 20}, spill.Options{Codec: spill.None, BlockSize: 16 << 10})
	s := NewSorter(env.Env, SortOptions{})
	defer s.Close()
	recs := manyRecords(6, 100000)
	for _, r := range recs {
		if err := s.Add(r.Key, r.Val); err != nil {
			t.Fatal(err)
		}
	}
	it, err := s.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if st := s.Stats(); st.FanIn < 4 {
		t.Fatalf("expected a merge of several runs, got %+v", st)
	}
	n := 0
	for n < 1000 && func() bool { _, _, ok := it.Next(); return ok }() {
		n++
	}
	// testing.AllocsPerRun would spend the whole merge in its warm-up call, so
	// count the allocations of the rest of the merge directly.
	allocs := allocsOf(func() {
		for {
			if _, _, ok := it.Next(); !ok {
				break
			}
			n++
		}
	})
	if n != len(recs) {
		t.Fatalf("merged %d records, want %d (%v)", n, len(recs), it.Err())
	}
	// Spill readers recycle their block buffers; a handful of allocations over
	// 100,000 records is noise from the runtime, one per record is a defect.
	t.Logf("iterating %d records of %d runs allocated %d times", len(recs)-1000, s.Stats().FanIn, allocs)
	if allocs > 10 {
		t.Errorf("iterating %d records allocated %v times", len(recs)-1000, allocs)
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	env.check(t)
}
