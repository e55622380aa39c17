package stream

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
	"github.com/weirdata/weir/spill"
	"github.com/weirdata/weir/stream/source"
	"github.com/weirdata/weir/stream/watermark"
)

type padded struct {
	Seq int
	Pad string
}

// TestFeedbackQueueOrder: records pushed in bursts far larger than a
// 64 KiB budget come out of a feedback queue in the order they went in,
// with their timestamps, whether the head drains between pushes or
// concurrently with them; the queue spilled, gave its memory back and
// removed its spill files.
func TestFeedbackQueueOrder(t *testing.T) {
	for _, concurrent := range []bool{false, true} {
		t.Run(fmt.Sprint("concurrent=", concurrent), func(t *testing.T) {
			m := memory.MustNewManager(memory.Options{Budget: 64 << 10})
			fs := spill.NewMemFS()
			env := resource.Env{Memory: m, FS: fs}
			q := newFeedback[padded]("feedback-test")
			const total = 20000
			var got []Record[padded]
			out := pushFunc[padded](func(b []Record[padded]) error {
				if len(b) > 7 {
					return fmt.Errorf("batch of %d records, want at most 7", len(b))
				}
				got = append(got, b...)
				return nil
			})
			rng := rand.New(rand.NewPCG(1, 2))
			var spilled int64
			tail := func() error {
				for seq := 0; seq < total; {
					n := min(1+rng.IntN(3000), total-seq)
					b := make([]Record[padded], n)
					for i := range b {
						b[i] = Record[padded]{Value: padded{Seq: seq, Pad: strings.Repeat("x", seq%97)}, Timestamp: int64(seq) * 3}
						seq++
					}
					s, err := q.push(env, b)
					if err != nil {
						return err
					}
					spilled += s
					if !concurrent && rng.IntN(3) == 0 {
						if _, err := q.drain(out, 7); err != nil {
							return err
						}
					}
				}
				return nil
			}
			if concurrent {
				errc := make(chan error, 1)
				go func() { errc <- tail() }()
				var err error
				for done := false; !done || len(got) < total; {
					select {
					case err = <-errc:
						done = true
						if err != nil {
							t.Fatal(err)
						}
					case <-q.ready():
					}
					if _, err := q.drain(out, 7); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				if err := tail(); err != nil {
					t.Fatal(err)
				}
				for len(got) < total {
					if ok, err := q.drain(out, 7); err != nil || !ok {
						t.Fatalf("drain: %v, %v with %d of %d records out", ok, err, len(got), total)
					}
				}
			}
			if ok, _ := q.drain(out, 7); ok {
				t.Fatal("records after the last one")
			}
			if len(got) != total {
				t.Fatalf("%d records out, want %d", len(got), total)
			}
			for i, r := range got {
				if r.Value.Seq != i || r.Timestamp != int64(i)*3 || len(r.Value.Pad) != i%97 {
					t.Fatalf("record %d is %d (timestamp %d, pad %d)", i, r.Value.Seq, r.Timestamp, len(r.Value.Pad))
				}
			}
			if spilled == 0 || q.spilled == 0 {
				t.Fatal("nothing spilled under a 64 KiB budget")
			}
			if files := fs.Files(); len(files) != 0 {
				t.Fatalf("spill files left after draining: %v", files)
			}
			if err := q.end(); err != nil {
				t.Fatal(err)
			}
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			if u := m.Used(); u != 0 {
				t.Fatalf("%d bytes still reserved", u)
			}
		})
	}
}

// watchFeedback sets testFeedbackEnded for the test: it fails the test
// when a queue's spill files outlive its end, and returns the records the
// queues spilled and whether a queue ended holding spill files.
func watchFeedback(t *testing.T) (spilled *atomic.Int64, held *atomic.Bool) {
	spilled, held = &atomic.Int64{}, &atomic.Bool{}
	var mu sync.Mutex
	testFeedbackEnded = func(fs spill.FS, files []string, n int64) {
		spilled.Add(n)
		if len(files) > 0 {
			held.Store(true)
		}
		dir := fs.(*spill.DiskFS).Dir()
		for _, name := range files {
			if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
				mu.Lock()
				t.Errorf("spill file %s left after the queue ended: %v", name, err)
				mu.Unlock()
			}
		}
	}
	t.Cleanup(func() { testFeedbackEnded = nil })
	return spilled, held
}

// TestIterateFeedbackSpills: a loop that feeds back bursts of records far
// larger than a 1 MiB budget (each root fans out into 2^depth records of
// 200 bytes, about 10 MiB in flight at the last level) gives exactly the
// closed form's output at parallelism 1 and 2: each root 2^depth times at
// the root's timestamp. The queue spilled (the job's spilled bytes and the
// queues' count), removed each run once read back, and left nothing in the
// spill directory.
func TestIterateFeedbackSpills(t *testing.T) {
	const roots, depth = 400, 7
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint("p", p), func(t *testing.T) {
			spilled, held := watchFeedback(t)
			tmp := t.TempDir()
			env := New(Options{Parallelism: p, Memory: 1 << 20, TmpDir: tmp})
			var in []int
			for r := range roots {
				in = append(in, r)
			}
			ts := watermark.ForMonotonousTimestamps[int]().WithTimestampAssigner(func(r int, _ int64) int64 { return int64(r) * 10 })
			type fat struct {
				Root, Depth int
				Pad         string
			}
			src := Map(FromSource(env, source.FromSlice(in), ts, "roots"), func(r int) fat {
				return fat{Root: r, Pad: strings.Repeat("p", 200)}
			})
			got := fanOutFrom(src, depth, func(f *fat) *int { return &f.Depth })
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := env.Execute(ctx)
			if err != nil {
				t.Fatal(err)
			}
			count := map[int]int{}
			for _, r := range got.Records() {
				if r.Value.Depth != depth || len(r.Value.Pad) != 200 || r.Timestamp != int64(r.Value.Root)*10 {
					t.Fatalf("record %d at depth %d, pad %d, timestamp %d", r.Value.Root, r.Value.Depth, len(r.Value.Pad), r.Timestamp)
				}
				count[r.Value.Root]++
			}
			if len(count) != roots {
				t.Fatalf("%d roots came out, want %d", len(count), roots)
			}
			for r, n := range count {
				if n != 1<<depth {
					t.Fatalf("root %d came out %d times, want %d", r, n, 1<<depth)
				}
			}
			if res.SpilledBytes() == 0 || spilled.Load() == 0 {
				t.Fatalf("nothing spilled under a 1 MiB budget (%d bytes, %d records)", res.SpilledBytes(), spilled.Load())
			}
			if held.Load() {
				t.Fatal("a queue held spill files at its end: runs not removed as they were read")
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Fatalf("%d entries left in the spill directory", len(left))
			}
		})
	}
}

// TestIterateFeedbackSpillCleanup: a loop that spills its feedback and
// then fails, or is cancelled while records circle forever, removes its
// spill files and releases its memory (the job's manager reports
// reservations left) on the way out.
func TestIterateFeedbackSpillCleanup(t *testing.T) {
	for _, fail := range []bool{true, false} {
		t.Run(fmt.Sprint("fail=", fail), func(t *testing.T) {
			spilled, held := watchFeedback(t)
			tmp := t.TempDir()
			env := New(Options{Parallelism: 2, Memory: 1 << 20, TmpDir: tmp})
			in := make([]string, 2000)
			for i := range in {
				in[i] = strings.Repeat("r", 500)
			}
			it := Iterate(FromSlice(env, in), 0)
			var trips atomic.Int64
			boom := errors.New("boom")
			step := Process(it.DataStream, func() ProcessFunction[string, string] {
				return ProcessFunction[string, string]{
					ProcessElement: func(v string, _ *Context, out Collector[string]) error {
						if n := trips.Add(1); fail && n > 200_000 {
							return boom
						}
						out.Collect(v)
						return nil
					},
				}
			})
			it.CloseWith(FlatMap(step, func(v string, emit func(string)) { emit(v); emit(v) }))
			j, err := env.Start(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !fail {
				for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && trips.Load() < 200_000; {
					time.Sleep(5 * time.Millisecond)
				}
				j.Cancel()
			}
			_, err = j.Wait()
			if fail && !errors.Is(err, boom) || !fail && !errors.Is(err, context.Canceled) {
				t.Fatalf("wait: %v", err)
			}
			if spilled.Load() == 0 || !held.Load() {
				t.Fatalf("the queues spilled %d records and held files at their end: %v", spilled.Load(), held.Load())
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Fatalf("%d entries left in the spill directory", len(left))
			}
		})
	}
}

// TestFeedbackQueueAllocs: a feedback queue allocates nothing per record:
// a push and a drain of a batch of flat records in memory allocate
// nothing once warm, and a batch that spills allocates per run (a writer,
// a reader), not per record.
func TestFeedbackQueueAllocs(t *testing.T) {
	batch := make([]Record[tuple3], 1024)
	for i := range batch {
		batch[i] = Record[tuple3]{Value: tuple3{i, i, i}, Timestamp: int64(i)}
	}
	out := pushFunc[tuple3](func([]Record[tuple3]) error { return nil })
	for _, c := range []struct {
		name   string
		budget int64
		max    float64
	}{{"memory", 0, 0}, {"spill", 64 << 10, 64}} {
		t.Run(c.name, func(t *testing.T) {
			m := memory.MustNewManager(memory.Options{Budget: c.budget})
			env := resource.Env{Memory: m, FS: spill.NewMemFS()}
			q := newFeedback[tuple3]("feedback-allocs")
			spilled := int64(0)
			cycle := func() {
				for range 4 {
					n, err := q.push(env, batch)
					if err != nil {
						t.Fatal(err)
					}
					spilled += n
				}
				for {
					if ok, err := q.drain(out, 256); err != nil {
						t.Fatal(err)
					} else if !ok {
						break
					}
				}
			}
			cycle()
			got := testing.AllocsPerRun(20, cycle)
			t.Logf("%.0f allocations per 4096 records", got)
			if got > c.max {
				t.Errorf("%.0f allocations per 4096 records, want at most %.0f", got, c.max)
			}
			if (spilled > 0) != (c.budget > 0) {
				t.Errorf("spilled %d bytes under budget %d", spilled, c.budget)
			}
			if err := q.end(); err != nil {
				t.Fatal(err)
			}
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestFeedbackQueueUnencodable: feedback of a type the record codec
// refuses (a map) stays in memory within the budget and fails with a
// message naming the cause once it would have to spill.
func TestFeedbackQueueUnencodable(t *testing.T) {
	type tagged struct{ Tags map[string]int }
	m := memory.MustNewManager(memory.Options{Budget: 64 << 10})
	env := resource.Env{Memory: m, FS: spill.NewMemFS()}
	q := newFeedback[tagged]("feedback-maps")
	if _, err := q.push(env, make([]Record[tagged], 10)); err != nil {
		t.Fatalf("within the budget: %v", err)
	}
	_, err := q.push(env, make([]Record[tagged], 100_000))
	if err == nil || !strings.Contains(err.Error(), "cannot spill") || !strings.Contains(err.Error(), "map") {
		t.Fatalf("err = %v", err)
	}
	if err := q.end(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}
