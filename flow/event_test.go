package flow

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// TestEventOrder: one producer interleaves records and events; the consumer
// sees exactly the same sequence, whatever the batch size.
func TestEventOrder(t *testing.T) {
	for _, bs := range []int{1, 7, 1024} {
		for _, strategy := range []ShipStrategy{Forward, Hash} {
			t.Run(fmt.Sprintf("batch%d/%v", bs, strategy), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(bs), 2))
				var want []string
				type step struct {
					ev  Event
					rec rec
				}
				var steps []step
				for i := 0; i < 3000; i++ {
					if r.IntN(20) == 0 {
						e := Event{Kind: EventKind(Watermark + EventKind(r.IntN(3))), Value: int64(i)}
						steps = append(steps, step{ev: e})
						want = append(want, fmt.Sprintf("%v:%d", e.Kind, e.Value))
					} else {
						steps = append(steps, step{rec: rec{Key: r.Int64N(100), Seq: int64(i)}})
						want = append(want, fmt.Sprintf("r%d", i))
					}
				}
				env := newTestEnv(t, budgets[0].opts)
				g := NewGraph()
				src := g.Vertex("source", 1, func(tc *TaskContext) error {
					w := Output[rec](tc, 0)
					for _, s := range steps {
						var err error
						if s.ev.Kind != 0 {
							err = w.Event(s.ev)
						} else {
							err = w.Emit(&s.rec)
						}
						if err != nil {
							return err
						}
					}
					return nil
				})
				var got []string
				dst := g.Vertex("sink", 1, func(tc *TaskContext) error {
					in := Input[rec](tc, 0)
					for {
						b, ev, err := in.NextOrEvent(tc.Context())
						if errors.Is(err, io.EOF) {
							return nil
						}
						if err != nil {
							return err
						}
						if ev != nil {
							if ev.Source != 0 {
								return fmt.Errorf("event source %d", ev.Source)
							}
							got = append(got, fmt.Sprintf("%v:%d", ev.Kind, ev.Value))
							continue
						}
						for _, r := range b {
							got = append(got, fmt.Sprintf("r%d", r.Seq))
						}
					}
				})
				Connect(g, src, dst, Partitioner[rec]{Strategy: strategy, Hash: hashKey}, Pipelined, nil)
				if _, err := Execute(bg, g, env.options(Options{BatchSize: bs})); err != nil {
					t.Fatal(err)
				}
				env.check(t)
				if !slices.Equal(got, want) {
					t.Fatalf("sequence differs: got %d items, want %d", len(got), len(want))
				}
			})
		}
	}
}

// phaseCount is what the aligned operator emits: how many records of one phase
// (the stretch between two aligned events) one consumer subtask saw.
type phaseCount struct {
	Consumer int
	Phase    int64
	Count    int64
}

// TestAlignment: 3 producers -> 2 consumers. Each producer emits, per
// superstep s, records of phase 2s, a Barrier s, records of phase 2s+1 and an
// EndOfSuperstep s; producers run at different speeds. The consumer aligns the
// events and checks every record belongs to the current phase (which fails
// without alignment), then emits its count per phase to a sink; the counts
// equal the oracle's.
func TestAlignment(t *testing.T) {
	const nProd, nCons, supersteps = 3, 2, 6
	r := rand.New(rand.NewPCG(4, 4))
	var input [nProd][supersteps * 2][]rec
	want := map[phaseCount]bool{}
	wantCount := map[[2]int64]int64{}
	for p := range input {
		for ph := range input[p] {
			n := 1 + r.IntN(400*(p+1))
			for i := 0; i < n; i++ {
				k := r.Int64N(1000)
				input[p][ph] = append(input[p][ph], rec{Key: k, Prod: int32(p), Seq: int64(ph)})
				c := int((hashKey(&rec{Key: k}) >> 32) * nCons >> 32)
				wantCount[[2]int64{int64(c), int64(ph)}]++
			}
		}
	}
	for k, n := range wantCount {
		want[phaseCount{int(k[0]), k[1], n}] = true
	}
	env := newTestEnv(t, budgets[0].opts)
	g := NewGraph()
	src := g.Vertex("source", nProd, func(tc *TaskContext) error {
		w := Output[rec](tc, 0)
		for s := int64(0); s < supersteps; s++ {
			if err := w.EmitBatch(input[tc.Subtask][2*s]); err != nil {
				return err
			}
			if err := w.Event(Event{Kind: Barrier, Value: s}); err != nil {
				return err
			}
			if err := w.EmitBatch(input[tc.Subtask][2*s+1]); err != nil {
				return err
			}
			if err := w.Event(Event{Kind: EndOfSuperstep, Value: s}); err != nil {
				return err
			}
		}
		return nil
	})
	op := g.Vertex("aligned", nCons, func(tc *TaskContext) error {
		a := NewAligner(Input[rec](tc, 0))
		w := Output[phaseCount](tc, 0)
		phase, n := int64(0), int64(0)
		for {
			b, ev, err := a.Next(tc.Context())
			if errors.Is(err, io.EOF) {
				if phase != 2*supersteps {
					return fmt.Errorf("ended in phase %d", phase)
				}
				return nil
			}
			if err != nil {
				return err
			}
			if ev == nil {
				for _, r := range b {
					if r.Seq != phase {
						return fmt.Errorf("record of phase %d in phase %d", r.Seq, phase)
					}
				}
				n += int64(len(b))
				continue
			}
			wantKind := Barrier
			if phase%2 == 1 {
				wantKind = EndOfSuperstep
			}
			if ev.Kind != wantKind || ev.Value != phase/2 || ev.Source != -1 {
				return fmt.Errorf("phase %d: got event %+v", phase, *ev)
			}
			if n > 0 {
				if err := w.Emit(&phaseCount{Consumer: tc.Subtask, Phase: phase, Count: n}); err != nil {
					return err
				}
			}
			phase, n = phase+1, 0
		}
	})
	var mu sync.Mutex
	got := map[phaseCount]bool{}
	sink := g.Vertex("sink", 1, func(tc *TaskContext) error {
		in := Input[phaseCount](tc, 0)
		for {
			b, err := in.Next(tc.Context())
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			mu.Lock()
			for _, pc := range b {
				got[pc] = true
			}
			mu.Unlock()
		}
	})
	Connect(g, src, op, Partitioner[rec]{Strategy: Hash, Hash: hashKey}, Pipelined, nil)
	Connect(g, op, sink, Partitioner[phaseCount]{Strategy: Rebalance}, Pipelined, nil)
	if _, err := Execute(bg, g, env.options(Options{BatchSize: 16})); err != nil {
		t.Fatal(err)
	}
	env.check(t)
	if len(got) != len(want) {
		t.Fatalf("got %d phase counts, want %d", len(got), len(want))
	}
	for pc := range want {
		if !got[pc] {
			t.Fatalf("missing %+v", pc)
		}
	}
}

// TestWatermarks: producers emit records with increasing timestamps (Key) and a
// watermark after each; the aligned consumer never sees a record older than
// the combined watermark, which only advances.
func TestWatermarks(t *testing.T) {
	const nProd, nCons = 3, 2
	final := make([]int64, nProd)
	env := newTestEnv(t, budgets[0].opts)
	g := NewGraph()
	src := g.Vertex("source", nProd, func(tc *TaskContext) error {
		r := rand.New(rand.NewPCG(uint64(tc.Subtask), 5))
		w := Output[rec](tc, 0)
		ts := int64(0)
		for i := 0; i < 2000; i++ {
			ts += r.Int64N(10 * int64(tc.Subtask+1))
			if err := w.Emit(&rec{Key: ts, Prod: int32(tc.Subtask)}); err != nil {
				return err
			}
			if i%10 == 9 {
				if err := w.Event(Event{Kind: Watermark, Value: ts}); err != nil {
					return err
				}
			}
		}
		final[tc.Subtask] = ts
		return nil
	})
	lastWM := make([]int64, nCons)
	dst := g.Vertex("sink", nCons, func(tc *TaskContext) error {
		a := NewAligner(Input[rec](tc, 0))
		wm := int64(math.MinInt64)
		advanced := 0
		for {
			b, ev, err := a.Next(tc.Context())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			if ev != nil {
				if ev.Kind != Watermark || ev.Value <= wm || ev.Value != a.Watermark() {
					return fmt.Errorf("event %+v after watermark %d", *ev, wm)
				}
				wm = ev.Value
				advanced++
				continue
			}
			for _, r := range b {
				if r.Key < wm {
					return fmt.Errorf("record at %d after watermark %d", r.Key, wm)
				}
			}
		}
		if advanced == 0 {
			return errors.New("watermark never advanced")
		}
		lastWM[tc.Subtask] = wm
		return nil
	})
	Connect(g, src, dst, Partitioner[rec]{Strategy: Rebalance}, Pipelined, nil)
	if _, err := Execute(bg, g, env.options(Options{BatchSize: 8})); err != nil {
		t.Fatal(err)
	}
	env.check(t)
	lo := slices.Min(final)
	for c, w := range lastWM {
		if w < lo {
			t.Errorf("consumer %d: last watermark %d below every producer's final one (min %d)", c, w, lo)
		}
	}
}

func TestWatermarkTracker(t *testing.T) {
	tr := NewWatermarkTracker(3)
	steps := []struct {
		end     bool
		src     int
		wm      int64
		want    int64
		advance bool
	}{
		{false, 0, 5, math.MinInt64, false},
		{false, 1, 3, math.MinInt64, false},
		{false, 2, 4, 3, true},
		{false, 1, 2, 3, false}, // lower than before: ignored
		{false, 1, 9, 4, true},
		{true, 2, 0, 5, true},
		{false, 0, 7, 7, true},
		{true, 0, 0, 9, true},
	}
	for i, s := range steps {
		var got int64
		var adv bool
		if s.end {
			got, adv = tr.End(s.src)
		} else {
			got, adv = tr.Update(s.src, s.wm)
		}
		if got != s.want || adv != s.advance {
			t.Fatalf("step %d: got %d %v, want %d %v", i, got, adv, s.want, s.advance)
		}
	}
}

// TestEventOnBlockingEdge: blocking edges carry no events.
func TestEventOnBlockingEdge(t *testing.T) {
	env := newTestEnv(t, budgets[0].opts)
	g := NewGraph()
	a := g.Vertex("a", 1, func(tc *TaskContext) error {
		return Output[rec](tc, 0).Event(Event{Kind: Barrier, Value: 1})
	})
	b := g.Vertex("b", 1, func(tc *TaskContext) error { return nil })
	Connect(g, a, b, Partitioner[rec]{Strategy: Forward}, Blocking, recCodec(t))
	if _, err := Execute(bg, g, env.options(Options{})); err == nil {
		t.Fatal("event on a blocking edge accepted")
	}
	env.check(t)
}
