package flow

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"
)

// TestBackpressure: a slow consumer holds its producer back. The records the
// producer emitted but the consumer has not received never exceed what the
// channel (Buffers batches), the batch in flight and the pending batch hold,
// and they do reach the channel bound (so the producer really waited).
func TestBackpressure(t *testing.T) {
	for _, ft := range []time.Duration{-1, time.Millisecond} {
		t.Run(fmt.Sprintf("flush%v", ft), func(t *testing.T) {
			const batch, buffers, total = 16, 3, 20000
			var emitted, received atomic.Int64
			var maxLag int64
			env := newTestEnv(t, budgets[1].opts)
			g := NewGraph()
			src := g.Vertex("source", 1, func(tc *TaskContext) error {
				w := Output[rec](tc, 0)
				for i := int64(0); i < total; i++ {
					if err := w.Emit(&rec{Seq: i}); err != nil {
						return err
					}
					emitted.Add(1)
				}
				return nil
			})
			dst := g.Vertex("slow", 1, func(tc *TaskContext) error {
				r := Input[rec](tc, 0)
				next := int64(0)
				for {
					b, err := r.Next(tc.Context())
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						return err
					}
					received.Add(int64(len(b)))
					for _, x := range b {
						if x.Seq != next {
							return fmt.Errorf("record %d where %d was due", x.Seq, next)
						}
						next++
					}
					if lag := emitted.Load() - received.Load(); lag > maxLag {
						maxLag = lag
					}
					for range 2000 { // be slow without sleeping
						_ = tc.Context().Err()
					}
					if lag := emitted.Load() - received.Load(); lag > maxLag {
						maxLag = lag
					}
				}
				if next != total {
					return fmt.Errorf("received %d records", next)
				}
				return nil
			})
			Connect(g, src, dst, Partitioner[rec]{Strategy: Forward}, Pipelined, nil)
			if _, err := Execute(bg, g, env.options(Options{BatchSize: batch, Buffers: buffers, BufferTimeout: ft})); err != nil {
				t.Fatal(err)
			}
			// memory stays bounded: the batches in circulation are recycled, never
			// more than the pending one, the channel's, the one in flight and the
			// consumer's
			if n := g.edges[0].(*edge[rec]).batches; n > buffers+3 {
				t.Errorf("%d batches allocated for %d records, want at most %d", n, total, buffers+3)
			}
			env.check(t)
			bound := int64((buffers + 2) * batch)
			if maxLag > bound {
				t.Fatalf("producer ran %d records ahead, bound %d", maxLag, bound)
			}
			// without a flusher every batch is full: at some point the channel was
			// full while the producer waited
			if ft < 0 && maxLag < int64((buffers-1)*batch) {
				t.Fatalf("producer never filled the channel: at most %d records ahead", maxLag)
			}
		})
	}
}

// TestFlushTimeout: a producer emits one record and waits, without ending,
// until the consumer has seen it: the buffer timeout must send the partial
// batch. (The deadline guards against a hang; no timing is asserted.)
func TestFlushTimeout(t *testing.T) {
	for _, strategy := range []ShipStrategy{Forward, Hash, Broadcast} {
		t.Run(strategy.String(), func(t *testing.T) {
			env := newTestEnv(t, budgets[0].opts)
			seen := make(chan struct{})
			g := NewGraph()
			src := g.Vertex("source", 1, func(tc *TaskContext) error {
				if err := Output[rec](tc, 0).Emit(&rec{Key: 1, Seq: 7}); err != nil {
					return err
				}
				select {
				case <-seen:
					return nil
				case <-time.After(10 * time.Second):
					return errors.New("consumer never saw the record")
				}
			})
			dst := g.Vertex("sink", 1, func(tc *TaskContext) error {
				r := Input[rec](tc, 0)
				b, err := r.Next(tc.Context())
				if err != nil {
					return err
				}
				if len(b) != 1 || b[0].Seq != 7 {
					return fmt.Errorf("got %+v", b)
				}
				close(seen)
				if _, err := r.Next(tc.Context()); !errors.Is(err, io.EOF) {
					return fmt.Errorf("after the record: %v", err)
				}
				return nil
			})
			Connect(g, src, dst, Partitioner[rec]{Strategy: strategy, Hash: hashKey}, Pipelined, nil)
			if _, err := Execute(bg, g, env.options(Options{BufferTimeout: 5 * time.Millisecond})); err != nil {
				t.Fatal(err)
			}
			env.check(t)
		})
	}
}

// TestConsumerEndsEarly: a consumer that returns without reading its input
// does not block its producers.
func TestConsumerEndsEarly(t *testing.T) {
	for _, mode := range []ExchangeMode{Pipelined, Blocking} {
		t.Run(mode.String(), func(t *testing.T) {
			env := newTestEnv(t, budgets[1].opts)
			g := NewGraph()
			src := g.Vertex("source", 2, sourceBody(genInput(2, 20000, uniformKeys, 2)))
			dst := g.Vertex("lazy", 2, func(tc *TaskContext) error { return nil })
			Connect(g, src, dst, Partitioner[rec]{Strategy: Hash, Hash: hashKey}, mode, recCodec(t))
			within(t, 10*time.Second, func() {
				if _, err := Execute(bg, g, env.options(Options{BatchSize: 32, Buffers: 1})); err != nil {
					t.Error(err)
				}
			})
			env.check(t)
		})
	}
}
