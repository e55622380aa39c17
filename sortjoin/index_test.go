package sortjoin

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
	"github.com/weirdata/weir/spill"
)

// The Index tests drive the index and a Go map side by side: every probe's answer
// must be the map's value of the key when Probe was called, whether it is answered
// at once or by FinishProbes, and All and Len must equal the map after every
// superstep, under every budget.

// indexBudget is one memory setting of the sweep.
type indexBudget struct {
	name   string
	mem    memory.Options
	limit  int64 // IndexOptions.Memory
	spills bool  // most buckets must spill under it
}

var indexBudgets = []indexBudget{
	{name: "unlimited", mem: memory.Options{SegmentSize: 4096}},
	{name: "medium", mem: memory.Options{SegmentSize: 4096, Budget: 40 * 4096}},
	{name: "tiny", mem: memory.Options{SegmentSize: 4096, Budget: 6 * 4096}, spills: true},
	{name: "option-limit", mem: memory.Options{SegmentSize: 4096}, limit: 4 * 4096, spills: true},
}

// indexWorkload describes a random delta-iteration-like run.
type indexWorkload struct {
	keys       int     // key space
	ops        int     // Upsert or Probe calls per superstep
	supersteps int     // rounds of ops, FinishProbes, ApplyPending
	probeFrac  float64 // share of probes among ops
	bigEvery   int     // every bigEvery-th value is larger than a segment (0: never)
	deltaEvery int     // every deltaEvery-th probe callback upserts its key (0: never)
	hot        bool    // half of the ops go to key 0
}

// indexOracle runs a workload on an Index and a map and checks them against each
// other. It returns the first error of the index (a failure is reported with t only
// when check is set).
type indexOracle struct {
	t     testing.TB
	x     *Index
	m     map[string][]byte
	r     *rand.Rand
	w     indexWorkload
	check bool

	probes  int
	want    map[int]probeAnswer // by probe number, snapshot at Probe time
	got     map[int]probeAnswer
	keyOf   map[int][]byte
	deltaID int
}

type probeAnswer struct {
	val   string
	found bool
}

func newIndexOracle(t testing.TB, x *Index, w indexWorkload, seed uint64, check bool) *indexOracle {
	return &indexOracle{
		t: t, x: x, m: map[string][]byte{}, r: rand.New(rand.NewPCG(seed, seed^0x1de)), w: w, check: check,
		want: map[int]probeAnswer{}, got: map[int]probeAnswer{}, keyOf: map[int][]byte{},
	}
}

// value makes a random value: short and of varying length, now and then larger
// than a 4 KiB segment.
func (o *indexOracle) value() []byte {
	n := o.r.IntN(24)
	if o.w.bigEvery > 0 && o.r.IntN(o.w.bigEvery) == 0 {
		n = 4096 + o.r.IntN(9000)
	}
	v := make([]byte, n)
	for i := range v {
		v[i] = byte(o.r.Uint32())
	}
	return v
}

func (o *indexOracle) key() []byte {
	if o.w.hot && o.r.IntN(2) == 0 {
		return uintKey(0)
	}
	return uintKey(o.r.Uint64N(uint64(o.w.keys)))
}

// answer is the ProbeFunc of every probe: it records the answer and, for some
// probes, upserts a delta of the key (in the map at the same moment).
func (o *indexOracle) answer(payload, value []byte, found bool) error {
	id := int(binary.LittleEndian.Uint64(payload))
	if _, dup := o.got[id]; dup {
		return fmt.Errorf("probe %d answered twice", id)
	}
	o.got[id] = probeAnswer{string(value), found}
	if o.w.deltaEvery > 0 && id%o.w.deltaEvery == 0 {
		k := o.keyOf[id]
		nv := append(bytes.Clone(value), payload[:1+id%5]...)
		o.m[string(k)] = nv
		return o.x.Upsert(k, nv)
	}
	return nil
}

// superstep runs one round: ops, FinishProbes, ApplyPending.
func (o *indexOracle) superstep(ctx context.Context) error {
	payload := make([]byte, 8)
	for range o.w.ops {
		k := o.key()
		if o.r.Float64() < o.w.probeFrac {
			id := o.probes
			o.probes++
			o.keyOf[id] = k
			v, ok := o.m[string(k)]
			o.want[id] = probeAnswer{string(v), ok}
			binary.LittleEndian.PutUint64(payload, uint64(id))
			if err := o.x.Probe(k, payload, o.answer); err != nil {
				return err
			}
			continue
		}
		v := o.value()
		o.m[string(k)] = v
		if err := o.x.Upsert(k, v); err != nil {
			return err
		}
	}
	if err := o.x.FinishProbes(ctx, o.answer); err != nil {
		return err
	}
	return o.x.ApplyPending(ctx)
}

// verify checks the probe answers so far, Len and All against the map.
func (o *indexOracle) verify(ctx context.Context) {
	t := o.t
	t.Helper()
	if len(o.got) != o.probes {
		t.Errorf("%d probes answered, want %d", len(o.got), o.probes)
	}
	bad := 0
	for id, want := range o.want {
		if got, ok := o.got[id]; ok && got != want && bad < 5 {
			bad++
			t.Errorf("probe %d of key %x: got (%d bytes, %v), want (%d bytes, %v)", id, o.keyOf[id], len(got.val), got.found, len(want.val), want.found)
		}
	}
	if n := o.x.Len(); n != int64(len(o.m)) {
		t.Errorf("Len = %d, want %d", n, len(o.m))
	}
	all := map[string][]byte{}
	err := o.x.All(ctx, func(k, v []byte) error {
		if _, dup := all[string(k)]; dup {
			return fmt.Errorf("key %x twice", k)
		}
		all[string(k)] = bytes.Clone(v)
		return nil
	})
	if err != nil {
		t.Fatalf("All: %v", err)
	}
	if !maps.EqualFunc(all, o.m, bytes.Equal) {
		missing, wrong := 0, 0
		for k, v := range o.m {
			if g, ok := all[k]; !ok {
				missing++
			} else if !bytes.Equal(g, v) {
				wrong++
			}
		}
		t.Errorf("All: %d records, want %d (%d missing, %d with a wrong value)", len(all), len(o.m), missing, wrong)
	}
}

func (b indexBudget) env(t testing.TB) *joinEnv { return newJoinEnv(t, b.mem) }

func TestIndexMatchesOracle(t *testing.T) {
	workloads := map[string]indexWorkload{
		"replacements": {keys: 3000, ops: 12000, supersteps: 3, probeFrac: 0.4, deltaEvery: 3},
		"big-values":   {keys: 400, ops: 2000, supersteps: 2, probeFrac: 0.4, bigEvery: 30, deltaEvery: 2},
		"hot-key":      {keys: 2000, ops: 12000, supersteps: 2, probeFrac: 0.3, hot: true, deltaEvery: 4},
	}
	for wname, w := range workloads {
		for _, b := range indexBudgets {
			t.Run(wname+"/"+b.name, func(t *testing.T) {
				e := b.env(t)
				x := NewIndex(e.Env, IndexOptions{Name: "solution", Memory: b.limit, Seed: 7})
				o := newIndexOracle(t, x, w, 1, true)
				ctx := context.Background()
				for s := range w.supersteps {
					if err := o.superstep(ctx); err != nil {
						t.Fatalf("superstep %d: %v", s, err)
					}
					o.verify(ctx)
				}
				st := x.Stats()
				t.Logf("%+v", st)
				if b.spills {
					if st.SpilledBuckets < st.Buckets/2 || st.DeferredProbes == 0 || st.PendingUpdates == 0 || st.Loads == 0 {
						t.Errorf("budget %s: only %d of %d buckets spilled, %d deferred probes, %d pending upserts, %d loads",
							b.name, st.SpilledBuckets, st.Buckets, st.DeferredProbes, st.PendingUpdates, st.Loads)
					}
				}
				if b.mem.Budget == 0 && b.limit == 0 && (st.SpilledBuckets != 0 || e.spilled()) {
					t.Errorf("unlimited memory: %d buckets spilled", st.SpilledBuckets)
				}
				if st.PeakMemory <= 0 {
					t.Errorf("PeakMemory = %d", st.PeakMemory)
				}
				if err := x.Close(); err != nil {
					t.Fatal(err)
				}
				if err := x.Close(); err != nil {
					t.Fatalf("second Close: %v", err)
				}
				e.check(t)
			})
		}
	}
}

// TestIndexHotKeyCompaction replaces one key's value many times with values of
// changing length: the bucket is compacted instead of growing without bound.
func TestIndexHotKeyCompaction(t *testing.T) {
	e := newJoinEnv(t, memory.Options{SegmentSize: 4096})
	x := NewIndex(e.Env, IndexOptions{})
	hot := uintKey(42)
	var last []byte
	for i := range 20000 {
		last = bytes.Repeat([]byte{byte(i)}, 10+i%50)
		if err := x.Upsert(hot, last); err != nil {
			t.Fatal(err)
		}
	}
	var got []byte
	found := false
	if err := x.Probe(hot, nil, func(_, v []byte, f bool) error { got, found = bytes.Clone(v), f; return nil }); err != nil {
		t.Fatal(err)
	}
	if !found || !bytes.Equal(got, last) {
		t.Errorf("hot key: got (%x, %v), want (%x, true)", got, found, last)
	}
	st := x.Stats()
	if st.Compactions == 0 || x.Len() != 1 {
		t.Errorf("%d compactions, Len %d; want some and 1", st.Compactions, x.Len())
	}
	// 20000 versions of ~35 bytes would take ~170 segments; compaction keeps a few.
	if st.PeakMemory > 8*4096 {
		t.Errorf("peak memory %d bytes for one key", st.PeakMemory)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	e.check(t)
}

func TestIndexEmpty(t *testing.T) {
	for _, b := range indexBudgets {
		t.Run(b.name, func(t *testing.T) {
			e := b.env(t)
			x := NewIndex(e.Env, IndexOptions{Memory: b.limit})
			ctx := context.Background()
			calls := 0
			fn := func(_, v []byte, found bool) error {
				calls++
				if found || v != nil {
					t.Errorf("probe of an empty index: (%x, %v)", v, found)
				}
				return nil
			}
			if err := x.Probe(uintKey(1), []byte("p"), fn); err != nil {
				t.Fatal(err)
			}
			if err := x.FinishProbes(ctx, fn); err != nil {
				t.Fatal(err)
			}
			if err := x.ApplyPending(ctx); err != nil {
				t.Fatal(err)
			}
			if err := x.All(ctx, func(k, v []byte) error { return fmt.Errorf("record %x in an empty index", k) }); err != nil {
				t.Fatal(err)
			}
			if calls != 1 || x.Len() != 0 {
				t.Errorf("%d probe callbacks, Len %d; want 1 and 0", calls, x.Len())
			}
			if err := x.Close(); err != nil {
				t.Fatal(err)
			}
			e.check(t)
		})
	}
}

// TestIndexLargeValues stores values of several segments each, replaced by values
// of other sizes, under a budget that holds only a few of them.
func TestIndexLargeValues(t *testing.T) {
	for _, b := range indexBudgets {
		t.Run(b.name, func(t *testing.T) {
			e := b.env(t)
			x := NewIndex(e.Env, IndexOptions{Memory: b.limit, Buckets: 4})
			ctx := context.Background()
			want := map[string][]byte{}
			r := rand.New(rand.NewPCG(5, 6))
			for round := range 3 {
				for i := range 12 {
					v := bytes.Repeat([]byte{byte(round*16 + i)}, 4096*(1+r.IntN(3))+r.IntN(100))
					want[string(uintKey(uint64(i)))] = v
					if err := x.Upsert(uintKey(uint64(i)), v); err != nil {
						t.Fatal(err)
					}
				}
				for i := range 13 {
					k := uintKey(uint64(i))
					w, ok := want[string(k)]
					if err := x.Probe(k, k, func(p, v []byte, found bool) error {
						if found != ok || !bytes.Equal(v, w) {
							t.Errorf("round %d key %d: got %d bytes (%v), want %d (%v)", round, i, len(v), found, len(w), ok)
						}
						return nil
					}); err != nil {
						t.Fatal(err)
					}
				}
				if err := x.FinishProbes(ctx, func(p, v []byte, found bool) error {
					w, ok := want[string(p)]
					if found != ok || !bytes.Equal(v, w) {
						t.Errorf("round %d deferred key %x: got %d bytes (%v), want %d (%v)", round, p, len(v), found, len(w), ok)
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				if err := x.ApplyPending(ctx); err != nil {
					t.Fatal(err)
				}
			}
			got := map[string][]byte{}
			if err := x.All(ctx, func(k, v []byte) error { got[string(k)] = bytes.Clone(v); return nil }); err != nil {
				t.Fatal(err)
			}
			if !maps.EqualFunc(got, want, bytes.Equal) || x.Len() != int64(len(want)) {
				t.Errorf("All: %d records (Len %d), want %d", len(got), x.Len(), len(want))
			}
			if b.spills && x.Stats().SpilledBuckets == 0 {
				t.Errorf("nothing spilled")
			}
			if err := x.Close(); err != nil {
				t.Fatal(err)
			}
			e.check(t)
		})
	}
}

// spilledIndex returns an index under the tiny budget with deferred probes pending.
func spilledIndex(t *testing.T, e *joinEnv) (*Index, *indexOracle) {
	t.Helper()
	x := NewIndex(e.Env, IndexOptions{Name: "solution"})
	w := indexWorkload{keys: 3000, ops: 6000, supersteps: 1, probeFrac: 0.3}
	o := newIndexOracle(t, x, w, 9, false)
	for i := range 3000 {
		if err := x.Upsert(uintKey(uint64(i)), o.value()); err != nil {
			t.Fatal(err)
		}
	}
	payload := make([]byte, 8)
	for i := range 3000 {
		binary.LittleEndian.PutUint64(payload, uint64(i))
		if err := x.Probe(uintKey(uint64(i)), payload, o.answer); err != nil {
			t.Fatal(err)
		}
	}
	if x.Stats().DeferredProbes < 1000 {
		t.Fatalf("only %d deferred probes", x.Stats().DeferredProbes)
	}
	return x, o
}

func TestIndexCancel(t *testing.T) {
	for _, after := range []int64{0, 3, 20} {
		t.Run(fmt.Sprintf("after%d", after), func(t *testing.T) {
			e := newJoinEnv(t, indexBudgets[2].mem)
			x, o := spilledIndex(t, e)
			ctx := &countdownCtx{Context: context.Background()}
			ctx.left.Store(after)
			err := x.FinishProbes(ctx, o.answer)
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "index solution") {
				t.Fatalf("FinishProbes: %v, want a wrapped context.Canceled", err)
			}
			if len(o.got) >= 3000 {
				t.Errorf("every probe answered despite the cancellation")
			}
			// The error is sticky.
			if err2 := x.Upsert(uintKey(1), nil); !errors.Is(err2, context.Canceled) {
				t.Errorf("Upsert after a failure: %v", err2)
			}
			if err := x.Close(); err != nil {
				t.Fatal(err)
			}
			e.check(t)
		})
	}
}

// TestIndexFaults fails one spill file operation at a time while a workload runs
// under the tiny budget: the error names the operation and wraps
// spill.ErrInjected, and Close leaves nothing in memory or on disk.
func TestIndexFaults(t *testing.T) {
	w := indexWorkload{keys: 2000, ops: 6000, supersteps: 2, probeFrac: 0.4, deltaEvery: 3}
	for _, op := range []spill.Op{spill.OpCreate, spill.OpWrite, spill.OpSync, spill.OpOpen, spill.OpRead, spill.OpRemove} {
		for _, nth := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/%d", op, nth), func(t *testing.T) {
				e := newJoinEnv(t, indexBudgets[2].mem)
				if op == spill.OpRemove {
					e.Spill.FileSize = -1 // a file per run: removals before Close
				}
				e.fault.FailNth(op, nth)
				x := NewIndex(e.Env, IndexOptions{Name: "solution"})
				o := newIndexOracle(t, x, w, 3, false)
				var err error
				for s := 0; s < w.supersteps && err == nil; s++ {
					err = o.superstep(context.Background())
				}
				if err == nil {
					t.Fatalf("no error after %d %s operations", e.fault.Count(op), op)
				}
				if !errors.Is(err, spill.ErrInjected) || !strings.Contains(err.Error(), op.String()) || !strings.Contains(err.Error(), "index solution") {
					t.Errorf("error %q does not wrap the injected %s fault", err, op)
				}
				if err2 := x.ApplyPending(context.Background()); !errors.Is(err2, spill.ErrInjected) {
					t.Errorf("ApplyPending after a failure: %v", err2)
				}
				if err := x.Close(); err != nil {
					t.Fatal(err)
				}
				e.check(t)
			})
		}
	}
}

// TestIndexContract checks the call order rules: no Probe from FinishProbes'
// callback, no ApplyPending or All with probes pending, nothing after Close.
func TestIndexContract(t *testing.T) {
	ctx := context.Background()
	t.Run("apply-with-pending-probes", func(t *testing.T) {
		e := newJoinEnv(t, indexBudgets[2].mem)
		x, _ := spilledIndex(t, e)
		if err := x.ApplyPending(ctx); err == nil || !strings.Contains(err.Error(), "FinishProbes first") {
			t.Errorf("ApplyPending with pending probes: %v", err)
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
		e.check(t)
	})
	t.Run("probe-from-finish", func(t *testing.T) {
		e := newJoinEnv(t, indexBudgets[2].mem)
		x, _ := spilledIndex(t, e)
		err := x.FinishProbes(ctx, func(p, v []byte, found bool) error {
			return x.Probe(uintKey(1), nil, func([]byte, []byte, bool) error { return nil })
		})
		if err == nil || !strings.Contains(err.Error(), "Probe called from a callback") {
			t.Errorf("Probe from FinishProbes: %v", err)
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
		e.check(t)
	})
	t.Run("after-close", func(t *testing.T) {
		e := newJoinEnv(t, memory.Options{SegmentSize: 4096})
		x := NewIndex(e.Env, IndexOptions{})
		if err := x.Upsert(uintKey(1), []byte("v")); err != nil {
			t.Fatal(err)
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
		if err := x.Upsert(uintKey(1), []byte("v")); err == nil || !strings.Contains(err.Error(), "after Close") {
			t.Errorf("Upsert after Close: %v", err)
		}
		e.check(t)
	})
	t.Run("nil-memory", func(t *testing.T) {
		x := NewIndex(resource.Env{}, IndexOptions{})
		if err := x.Upsert(uintKey(1), nil); err == nil || !strings.Contains(err.Error(), "Env.Memory is nil") {
			t.Errorf("Upsert without memory: %v", err)
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestIndexAllocs proves that Upsert (replacing a value) and Probe allocate
// nothing on resident buckets.
func TestIndexAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under the race detector are not the program's")
	}
	e := newJoinEnv(t, memory.Options{SegmentSize: 4096})
	x := NewIndex(e.Env, IndexOptions{})
	keys := make([][]byte, 1000)
	val := make([]byte, 16)
	for i := range keys {
		keys[i] = uintKey(uint64(i) * 7919)
		if err := x.Upsert(keys[i], val); err != nil {
			t.Fatal(err)
		}
	}
	hits := 0
	fn := func(_, v []byte, found bool) error {
		if found {
			hits++
		}
		return nil
	}
	upserts := testing.AllocsPerRun(20, func() {
		for i, k := range keys {
			val[0] = byte(i)
			if err := x.Upsert(k, val); err != nil {
				t.Fatal(err)
			}
		}
	})
	probes := testing.AllocsPerRun(20, func() {
		for _, k := range keys {
			if err := x.Probe(k, k, fn); err != nil {
				t.Fatal(err)
			}
		}
	})
	if upserts != 0 || probes != 0 {
		t.Errorf("%.1f allocations per %d upserts, %.1f per %d probes; want 0", upserts, len(keys), probes, len(keys))
	}
	if hits != 21*len(keys) {
		t.Errorf("%d probe hits, want %d", hits, 21*len(keys))
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	e.check(t)
}
