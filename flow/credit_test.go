package flow

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestCreditBlocksOneProducer: two producers feed one consumer that reads
// through its gate. Producer 0 sends barrier 1 first, then many records;
// the gate blocks its channel. Producer 1 waits until producer 0 used up its
// credit, then sends many batches and only then its barrier: those batches
// all reach the consumer while producer 0's channel is blocked, so a blocked
// channel stops only its producer. Producer 0's records emitted and not yet
// received never exceed its credit (ChannelBuffers batches), the batch it
// waits to send and its pending one, and producer 0 reports backpressured
// time. Afterwards every record arrives, in order per producer.
func TestCreditBlocksOneProducer(t *testing.T) {
	const batch, credits = 16, 3
	const total0, before1, after1 = 100 * batch, 50 * batch, 20 * batch
	var emitted0 atomic.Int64
	env := newTestEnv(t, budgets[0].opts)
	g := NewGraph()
	src := g.Vertex("source", 2, func(tc *TaskContext) error {
		w := Output[rec](tc, 0)
		emit := func(n int, seq *int64, count *atomic.Int64) error {
			for range n {
				if err := w.Emit(&rec{Prod: int32(tc.Subtask), Seq: *seq}); err != nil {
					return err
				}
				*seq++
				if count != nil {
					count.Add(1)
				}
			}
			return nil
		}
		var seq int64
		if tc.Subtask == 0 {
			if err := w.Event(Event{Kind: Barrier, Value: 1}); err != nil {
				return err
			}
			return emit(total0, &seq, &emitted0)
		}
		for emitted0.Load() < credits*batch { // producer 0 filled its channel
			if err := tc.Context().Err(); err != nil {
				return err
			}
			runtime.Gosched()
		}
		if err := emit(before1, &seq, nil); err != nil {
			return err
		}
		if err := w.Event(Event{Kind: Barrier, Value: 1}); err != nil {
			return err
		}
		return emit(after1, &seq, nil)
	})
	var maxLag, atBarrier int64
	var blockedFor1 int
	dst := g.Vertex("sink", 1, func(tc *TaskContext) error {
		gate := tc.Gate()
		r := Input[rec](tc, 0)
		next := [2]int64{}
		aligned := false
		for {
			it, err := gate.Next(tc.Context())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			switch it.Kind {
			case ItemBarrier:
				aligned = true
				atBarrier = emitted0.Load() - next[0]
			case ItemBatch:
				for _, x := range r.Batch() {
					if x.Seq != next[x.Prod] {
						return fmt.Errorf("producer %d: record %d where %d was due", x.Prod, x.Seq, next[x.Prod])
					}
					next[x.Prod]++
					if !aligned {
						if x.Prod == 0 {
							return errors.New("a record of producer 0 came before the barrier")
						}
						blockedFor1++
					}
				}
				if lag := emitted0.Load() - next[0]; lag > maxLag {
					maxLag = lag
				}
			}
		}
		if next[0] != total0 || next[1] != before1+after1 {
			return fmt.Errorf("received %v records", next)
		}
		return nil
	})
	Connect(g, src, dst, Partitioner[rec]{Strategy: Rebalance}, Pipelined, nil)
	var res *Result
	within(t, 20*time.Second, func() {
		var err error
		res, err = Execute(bg, g, env.options(Options{BatchSize: batch, ChannelBuffers: credits, BufferTimeout: -1}))
		if err != nil {
			t.Error(err)
		}
	})
	env.check(t)
	if t.Failed() {
		return
	}
	if blockedFor1 != before1 {
		t.Errorf("%d records of producer 1 flowed while producer 0 was blocked, want %d", blockedFor1, before1)
	}
	if bound := int64((credits + 2) * batch); maxLag > bound || atBarrier > bound {
		t.Errorf("producer 0 ran %d records ahead (%d at the barrier), bound %d", maxLag, atBarrier, bound)
	}
	if atBarrier < credits*batch {
		t.Errorf("producer 0 was %d records ahead at the barrier: it never used its credit", atBarrier)
	}
	if bp := res.Vertices[0].Subtasks[0].Backpressured; bp <= 0 {
		t.Errorf("producer 0 backpressured for %v", bp)
	}
	for _, v := range res.Vertices {
		for _, s := range v.Subtasks {
			if s.Busy+s.Idle+s.Backpressured > s.Wall || s.Busy < 0 {
				t.Errorf("%s %d: busy %v + idle %v + backpressured %v over wall %v", v.Name, s.Subtask, s.Busy, s.Idle, s.Backpressured, s.Wall)
			}
		}
	}
}

// TestChannelCreditsReserved: a pipelined edge reserves, for the whole job,
// one batch being filled per (producer, consumer), one held per consumer, one
// in flight per producer and ChannelBuffers per channel (one channel per
// consumer on a Forward edge, one per pair otherwise); the oracle counts them
// by hand for each shape.
func TestChannelCreditsReserved(t *testing.T) {
	const batch = 64
	cases := []struct {
		strategy         ShipStrategy
		nProd, nCons, cb int
		batches          int64
	}{
		{Hash, 2, 3, 2, 2*3 + 3 + 2 + 2*3*2},
		{Hash, 4, 1, 5, 4*1 + 1 + 4 + 4*1*5},
		{Forward, 3, 3, 2, 3*3 + 3 + 3 + 3*2},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%v/%dx%d/cb%d", c.strategy, c.nProd, c.nCons, c.cb), func(t *testing.T) {
			env := newTestEnv(t, budgets[0].opts)
			var used atomic.Int64
			g := NewGraph()
			src := g.Vertex("source", c.nProd, func(tc *TaskContext) error {
				w := Output[int64](tc, 0)
				for i := int64(0); i < 1000; i++ {
					if err := w.Emit(&i); err != nil {
						return err
					}
				}
				return nil
			})
			dst := g.Vertex("sink", c.nCons, func(tc *TaskContext) error {
				used.Store(tc.Env.Memory.Used())
				r := Input[int64](tc, 0)
				for {
					if _, err := r.Next(tc.Context()); err != nil {
						if errors.Is(err, io.EOF) {
							return nil
						}
						return err
					}
				}
			})
			Connect(g, src, dst, Partitioner[int64]{Strategy: c.strategy, Hash: func(v *int64) uint64 { return uint64(*v) * 0x9e3779b97f4a7c15 }}, Pipelined, nil)
			if _, err := Execute(bg, g, env.options(Options{BatchSize: batch, ChannelBuffers: c.cb})); err != nil {
				t.Fatal(err)
			}
			if want := c.batches * batch * 8; used.Load() != want {
				t.Errorf("%d bytes reserved, want %d (%d batches)", used.Load(), want, c.batches)
			}
			env.check(t)
		})
	}
}
