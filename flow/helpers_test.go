package flow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/spill"
)

// budget is one memory setting the tests sweep.
type budget struct {
	name string
	opts memory.Options
}

var budgets = []budget{
	{"unlimited", memory.Options{Budget: memory.Unlimited}},
	{"tiny", memory.Options{SegmentSize: 4096, Budget: 4 * 4096}},
}

// testEnv is a job environment whose cleanup the test checks: every reservation
// released, the spill directory empty.
type testEnv struct {
	mgr *memory.Manager
	fs  *spill.DiskFS
}

func newTestEnv(t testing.TB, mo memory.Options) *testEnv {
	t.Helper()
	fs, err := spill.NewDiskFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &testEnv{mgr: memory.MustNewManager(mo), fs: fs}
}

// options returns job options on this environment; small spill blocks keep the
// spill writers' memory small next to tiny budgets.
func (e *testEnv) options(o Options) Options {
	o.Manager = e.mgr
	o.FS = e.fs
	o.Spill = spill.Options{BlockSize: 4096}
	return o
}

// check asserts the job left nothing behind and closes the environment.
func (e *testEnv) check(t testing.TB) {
	t.Helper()
	ents, err := os.ReadDir(e.fs.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		names := make([]string, len(ents))
		for i, d := range ents {
			names[i] = d.Name()
		}
		t.Errorf("spill directory not empty: %v", names)
	}
	if err := e.mgr.Close(); err != nil {
		t.Error(err)
	}
	if err := e.fs.Close(); err != nil {
		t.Error(err)
	}
}

// rec is the record most tests move: a key, the producer that made it, a
// sequence number within the producer and an optional payload.
type rec struct {
	Key     int64
	Prod    int32
	Seq     int64
	Payload string
}

func recCodec(t testing.TB) *memory.Codec[rec] {
	t.Helper()
	c, err := memory.NewCodec[rec]()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func int64Codec(t testing.TB) *memory.Codec[int64] {
	t.Helper()
	c, err := memory.NewCodec[int64]()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// keyDist names a key distribution.
type keyDist string

const (
	uniformKeys keyDist = "uniform"
	zipfKeys    keyDist = "zipf"
	equalKeys   keyDist = "equal"
	bigRecords  keyDist = "big" // uniform keys, payloads larger than a segment
)

// genInput returns the records of each of nProd producers.
func genInput(nProd, perProd int, dist keyDist, seed uint64) [][]rec {
	out := make([][]rec, nProd)
	for p := range out {
		r := rand.New(rand.NewPCG(seed, uint64(p)))
		z := rand.NewZipf(r, 1.3, 1, 5000)
		n := perProd
		if dist == bigRecords {
			n = perProd / 50
		}
		recs := make([]rec, n)
		for i := range recs {
			var k int64
			switch dist {
			case uniformKeys, bigRecords:
				k = r.Int64N(10000) - 5000
			case zipfKeys:
				k = int64(z.Uint64())
			case equalKeys:
				k = 42
			}
			recs[i] = rec{Key: k, Prod: int32(p), Seq: int64(i)}
			if dist == bigRecords {
				recs[i].Payload = fmt.Sprintf("%0*d", 5000+r.IntN(5000), k)
			}
		}
		out[p] = recs
	}
	return out
}

// sourceBody emits input[subtask] on output 0, one record at a time.
func sourceBody(input [][]rec) func(tc *TaskContext) error {
	return func(tc *TaskContext) error {
		w := Output[rec](tc, 0)
		for i := range input[tc.Subtask] {
			if err := w.Emit(&input[tc.Subtask][i]); err != nil {
				return err
			}
		}
		return nil
	}
}

// collector gathers what each consumer subtask received.
type collector struct {
	mu  sync.Mutex
	got [][]rec
}

func newCollector(n int) *collector { return &collector{got: make([][]rec, n)} }

// body reads input 0 to its end and keeps copies of the records.
func (c *collector) body(tc *TaskContext) error {
	r := Input[rec](tc, 0)
	var mine []rec
	for {
		b, err := r.Next(tc.Context())
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return err
		}
		mine = append(mine, b...)
	}
	c.mu.Lock()
	c.got[tc.Subtask] = mine
	c.mu.Unlock()
	return nil
}

func (c *collector) all() []rec {
	var out []rec
	for _, g := range c.got {
		out = append(out, g...)
	}
	return out
}

// sameMultiset reports whether a and b hold the same records, in any order.
func sameMultiset(t testing.TB, what string, got, want []rec) {
	t.Helper()
	cmp := func(x, y rec) int {
		if c := (x.Prod - y.Prod); c != 0 {
			return int(c)
		}
		if x.Seq != y.Seq {
			if x.Seq < y.Seq {
				return -1
			}
			return 1
		}
		return 0
	}
	g := slices.Clone(got)
	w := slices.Clone(want)
	slices.SortFunc(g, cmp)
	slices.SortFunc(w, cmp)
	if len(g) != len(w) {
		t.Fatalf("%s: got %d records, want %d", what, len(g), len(w))
	}
	for i := range g {
		if g[i] != w[i] {
			t.Fatalf("%s: record %d: got %+v, want %+v", what, i, g[i], w[i])
		}
	}
}

func flatten(in [][]rec) []rec {
	var out []rec
	for _, p := range in {
		out = append(out, p...)
	}
	return out
}

func hashKey(v *rec) uint64 { return memory.HashUint64(uint64(v.Key), 7) }

func keyOf(dst []byte, v *rec) []byte { return memory.AppendInt64(dst, v.Key) }

// within runs f and fails the test if it takes longer than d (a deadlock guard,
// not a timing assertion).
func within(t testing.TB, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("did not finish within %v", d)
	}
}

var bg = context.Background()
