package nexmark

import (
	"bufio"
	"container/heap"
	"context"
	"fmt"
	"io"
)

// WriteOptions say what WriteJSON writes.
type WriteOptions struct {
	Config
	// Events is the number of events, 0 to Events-1.
	Events int64
	// Disorder, when positive, is the largest delay in milliseconds: each
	// event is delayed with p = 0.10 by d, uniform in [1, Disorder], and
	// the lines are stably sorted by (dateTime + d, n); dateTime does not
	// change. When a line is read, every earlier line has dateTime at most
	// this line's plus Disorder.
	Disorder int64
}

// WriteJSON writes the events of o to w as JSON lines, in order of event
// number or, with Disorder, in the delayed order. It checks ctx every
// 4,096 events. The delayed order keeps only the events whose turn has
// not come in memory, as (time, number) pairs: an event is made again
// when it is written.
func WriteJSON(ctx context.Context, w io.Writer, o WriteOptions) error {
	if o.Events < 0 || o.Disorder < 0 {
		return fmt.Errorf("nexmark: want events and disorder of 0 or more, got %d and %d", o.Events, o.Disorder)
	}
	g := NewGenerator(o.Config)
	bw := bufio.NewWriterSize(w, 1<<20)
	var (
		e    Event
		line []byte
	)
	write := func(n int64) error {
		g.Event(n, &e)
		line = append(AppendJSON(line[:0], &e), '\n')
		_, err := bw.Write(line)
		return err
	}
	cfg := g.Config()
	dseed := splitmix64(cfg.Seed ^ 0x64697364) // "disd": the delays' own stream
	var pending delayHeap
	for n := range o.Events {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if o.Disorder <= 0 {
			if err := write(n); err != nil {
				return fmt.Errorf("nexmark: %w", err)
			}
			continue
		}
		t := cfg.time(n)
		heap.Push(&pending, delayed{key: t + delay(dseed, n, o.Disorder), n: n})
		// every later event has a key of t or more, and a larger n
		for len(pending) > 0 && pending[0].key <= t {
			if err := write(heap.Pop(&pending).(delayed).n); err != nil {
				return fmt.Errorf("nexmark: %w", err)
			}
		}
	}
	for len(pending) > 0 {
		if err := write(heap.Pop(&pending).(delayed).n); err != nil {
			return fmt.Errorf("nexmark: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("nexmark: %w", err)
	}
	return nil
}

// delay is event n's delay: with p = 0.10, uniform in [1, most].
func delay(seed uint64, n, most int64) int64 {
	r := newJavaRand(splitmix64(seed ^ uint64(n)))
	if r.Intn(10) != 0 {
		return 0
	}
	return 1 + r.Longn(most)
}

// delayed is an event waiting for its turn: its sort key and number.
type delayed struct{ key, n int64 }

// delayHeap orders delayed events by (key, n).
type delayHeap []delayed

func (h delayHeap) Len() int { return len(h) }
func (h delayHeap) Less(i, j int) bool {
	return h[i].key < h[j].key || h[i].key == h[j].key && h[i].n < h[j].n
}
func (h delayHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *delayHeap) Push(x any)   { *h = append(*h, x.(delayed)) }
func (h *delayHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
