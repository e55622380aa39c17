package task

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
	"github.com/weirdata/weir/spill"
	"github.com/weirdata/weir/stream/internal/core"
)

type padded struct {
	Seq int
	Pad string
}

type tuple3 struct{ F0, F1, F2 int }

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
			q := NewFeedback[padded]("feedback-test")
			const total = 20000
			var got []core.Record[padded]
			out := core.PushFunc[padded](func(b []core.Record[padded]) error {
				if len(b) > 7 {
					return fmt.Errorf("batch of %d records, want at most 7", len(b))
				}
				got = append(got, b...)
				return nil
			})
			q.SetTarget(out)
			rng := rand.New(rand.NewPCG(1, 2))
			var spilled int64
			tail := func() error {
				for seq := 0; seq < total; {
					n := min(1+rng.IntN(3000), total-seq)
					b := make([]core.Record[padded], n)
					for i := range b {
						b[i] = core.Record[padded]{Value: padded{Seq: seq, Pad: strings.Repeat("x", seq%97)}, Timestamp: int64(seq) * 3}
						seq++
					}
					s, err := q.Push(env, b)
					if err != nil {
						return err
					}
					spilled += s
					if !concurrent && rng.IntN(3) == 0 {
						if _, err := q.drain(7, nil, nil); err != nil {
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
					if _, err := q.drain(7, nil, nil); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				if err := tail(); err != nil {
					t.Fatal(err)
				}
				for len(got) < total {
					if ok, err := q.drain(7, nil, nil); err != nil || !ok {
						t.Fatalf("drain: %v, %v with %d of %d records out", ok, err, len(got), total)
					}
				}
			}
			if ok, _ := q.drain(7, nil, nil); ok {
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

// TestFeedbackQueueAllocs: a feedback queue allocates nothing per record:
// a push and a drain of a batch of flat records in memory allocate
// nothing once warm, and a batch that spills allocates per run (a writer,
// a reader), not per record.
func TestFeedbackQueueAllocs(t *testing.T) {
	batch := make([]core.Record[tuple3], 1024)
	for i := range batch {
		batch[i] = core.Record[tuple3]{Value: tuple3{i, i, i}, Timestamp: int64(i)}
	}
	out := core.PushFunc[tuple3](func([]core.Record[tuple3]) error { return nil })
	for _, c := range []struct {
		name   string
		budget int64
		max    float64
	}{{"memory", 0, 0}, {"spill", 64 << 10, 64}} {
		t.Run(c.name, func(t *testing.T) {
			m := memory.MustNewManager(memory.Options{Budget: c.budget})
			env := resource.Env{Memory: m, FS: spill.NewMemFS()}
			q := NewFeedback[tuple3]("feedback-allocs")
			q.SetTarget(out)
			spilled := int64(0)
			cycle := func() {
				for range 4 {
					n, err := q.Push(env, batch)
					if err != nil {
						t.Fatal(err)
					}
					spilled += n
				}
				for {
					if ok, err := q.drain(256, nil, nil); err != nil {
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
	q := NewFeedback[tagged]("feedback-maps")
	if _, err := q.Push(env, make([]core.Record[tagged], 10)); err != nil {
		t.Fatalf("within the budget: %v", err)
	}
	_, err := q.Push(env, make([]core.Record[tagged], 100_000))
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
