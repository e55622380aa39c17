package flow

import (
	"fmt"
	"sync"
)

// Writer is a producer subtask's end of one output edge. It routes each record
// to a consumer's pending batch with the edge's partitioner and sends a batch
// when it is full, when BufferTimeout passed since it got its first record
// (pipelined edges), before an event, and when the body returns.
//
// Contract: the task's body calls Emit, EmitBatch, Event and Flush from its
// goroutine; the Writer closes itself when the body returns (sending
// EndOfPartition to every consumer) or fails. A Writer copies the records it is
// given: the caller keeps ownership of v and vs. After an error (a cancelled
// job, a failed spill) every call returns that error.
//
// Memory: a pipelined edge holds at most one pending batch per consumer per
// producer plus Options.ChannelBuffers batches per channel; a blocking edge
// holds its output in stores (see store) that spill through the job's spill FS.
type Writer[T any] struct {
	producer
	part   *Partitioner[T]
	bounds rangeBounds
	rr     int
	key    []byte

	bufs    [][]T   // guarded by mu when locking
	targets []int32 // CustomBatch's consumers of a chunk of records

	// sampled Range: records go to local until every producer published its sample
	sampling bool
	res      *reservoir
	local    []T
}

// producer is the untyped part of a Writer: what it does with a batch once
// the batch is made (send it, store it, spill it) and with events, compiled
// once for every record type.
type producer struct {
	x        *exchange
	tc       *TaskContext
	src      int
	n        int
	strategy ShipStrategy
	scratch  []byte
	held     int64 // bytes its stores hold in memory

	// locking is set when a flusher goroutine shares the writer (pipelined edge,
	// BufferTimeout > 0); mu then guards everything below and the Writer's
	// pending batches.
	locking bool
	mu      sync.Mutex
	gen     []uint64 // batches sent per consumer
	seenGen []uint64 // gen at the flusher's last tick
	seenAny []bool   // bufs[c] was non-empty at the flusher's last tick
	err     error
	done    bool
}

func (e *edge[T]) writer(tc *TaskContext) output {
	x := e.rt
	w := &Writer[T]{
		producer: producer{
			x: x, tc: tc, src: tc.Subtask, n: x.nCons, strategy: e.strategy,
			gen:     make([]uint64, x.nCons),
			seenGen: make([]uint64, x.nCons),
			seenAny: make([]bool, x.nCons),
			locking: x.mode == Pipelined && x.j.opts.BufferTimeout > 0,
		},
		part: &e.part, bounds: newRangeBounds(e.part.Bounds),
		bufs: make([][]T, x.nCons),
		rr:   tc.Subtask % x.nCons,
	}
	if x.sampler != nil {
		w.sampling = true
		w.res = newReservoir(sampleSize*x.nCons, uint64(tc.Subtask)+1)
	}
	if e.strategy == Custom && e.part.CustomBatch != nil {
		w.targets = make([]int32, customChunk)
	}
	return w
}

// customChunk is the number of records whose consumers CustomBatch computes
// in one call.
const customChunk = 256

// Output returns the task's i-th output (numbered in the order of Connect calls
// with this vertex as producer). Like Input it panics when there is no such
// output or it does not carry T.
func Output[T any](tc *TaskContext, i int) *Writer[T] {
	if i < 0 || i >= len(tc.outputs) {
		panic(fmt.Sprintf("flow: vertex %q has %d outputs, no output %d", tc.Vertex, len(tc.outputs), i))
	}
	w, ok := tc.outputs[i].(*Writer[T])
	if !ok {
		panic(fmt.Sprintf("flow: vertex %q output %d is a %T, not a %T", tc.Vertex, i, tc.outputs[i], w))
	}
	return w
}

func (w *producer) lock() {
	if w.locking {
		w.mu.Lock()
	}
}

func (w *producer) unlock() {
	if w.locking {
		w.mu.Unlock()
	}
}

// Emit routes one record (copied).
func (w *Writer[T]) Emit(v *T) error {
	w.lock()
	err := w.emit(v)
	w.unlock()
	return err
}

// EmitBatch routes every record of vs (copied); it takes the flusher's lock
// once for the whole slice.
func (w *Writer[T]) EmitBatch(vs []T) error {
	w.lock()
	defer w.unlock()
	if !w.sampling && w.err == nil && !w.done {
		switch {
		case w.strategy == Forward:
			return w.bulkBatch(w.src, vs)
		case w.n == 1 && (w.strategy == Rebalance || w.strategy == Hash):
			return w.bulkBatch(0, vs) // every record goes to the one consumer
		}
		switch w.strategy {
		case Hash:
			return w.hashBatch(vs)
		case Custom:
			return w.customBatch(vs)
		case Range:
			if w.part.View != nil {
				return w.rangeBatch(vs)
			}
		}
	}
	for i := range vs {
		if err := w.emit(&vs[i]); err != nil {
			return err
		}
	}
	return nil
}

func (w *Writer[T]) emit(v *T) error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return fmt.Errorf("flow: edge %s: emit after the writer closed", w.x.e.name)
	}
	if w.sampling {
		w.key = w.part.Key(w.key[:0], v)
		w.res.offer(w.key)
		if w.local == nil {
			w.local = getBatch[T](w.x)
		}
		w.local = append(w.local, *v)
		if len(w.local) == w.x.batchSize {
			b := w.local
			w.local = nil
			if w.err = w.x.j.ctx.Err(); w.err == nil {
				w.err = w.x.locals[w.src].add(wrap(b), &w.producer)
			} else {
				putBatch(w.x, b)
			}
		}
		return w.err
	}
	return w.route(v)
}

// bulkBatch appends vs to consumer c's batch a run at a time, sending each
// batch when full: the bulk form of route when every record goes to c (a
// Forward edge, or a Rebalance or Hash edge into one consumer subtask).
func (w *Writer[T]) bulkBatch(c int, vs []T) error {
	for len(vs) > 0 && w.err == nil {
		b := w.bufs[c]
		if b == nil {
			b = getBatch[T](w.x)
		}
		n := min(w.x.batchSize-len(b), len(vs))
		b = append(b, vs[:n]...)
		vs = vs[n:]
		w.bufs[c] = b
		if len(b) == w.x.batchSize {
			w.err = w.send(c)
		}
	}
	return w.err
}

// hashBatch is route for every record of vs on a Hash edge, with the
// strategy's dispatch hoisted out of the loop.
func (w *Writer[T]) hashBatch(vs []T) error {
	hash, n := w.part.Hash, uint64(w.n)
	for i := range vs {
		w.append(int((hash(&vs[i])>>32)*n>>32), &vs[i])
		if w.err != nil {
			return w.err
		}
	}
	return nil
}

// customBatch is route for every record of vs on a Custom edge.
func (w *Writer[T]) customBatch(vs []T) error {
	custom, n := w.part.Custom, w.n
	if w.part.CustomBatch != nil {
		return w.customBatchOnce(vs)
	}
	for i := range vs {
		p := custom(&vs[i], n)
		if p < 0 || p >= n {
			w.err = fmt.Errorf("flow: edge %s: custom partitioner returned %d for %d consumers", w.x.e.name, p, n)
			return w.err
		}
		w.append(p, &vs[i])
		if w.err != nil {
			return w.err
		}
	}
	return nil
}

// customBatchOnce is customBatch with the consumers of vs computed by one
// call of CustomBatch, a chunk of targets at a time.
func (w *Writer[T]) customBatchOnce(vs []T) error {
	n := w.n
	for len(vs) > 0 {
		chunk := vs[:min(len(vs), len(w.targets))]
		vs = vs[len(chunk):]
		tg := w.targets[:len(chunk)]
		w.part.CustomBatch(chunk, n, tg)
		for i := range chunk {
			p := int(tg[i])
			if p < 0 || p >= n {
				w.err = fmt.Errorf("flow: edge %s: custom partitioner returned %d for %d consumers", w.x.e.name, p, n)
				return w.err
			}
			b := w.bufs[p] // append, inline
			if b == nil {
				b = getBatch[T](w.x)
			}
			b = append(b, chunk[i])
			w.bufs[p] = b
			if len(b) == w.x.batchSize {
				if w.err = w.send(p); w.err != nil {
					return w.err
				}
			}
		}
	}
	return nil
}

// rangeBatch is route for every record of vs on a Range edge whose keys are
// the records' own bytes (Partitioner.View).
func (w *Writer[T]) rangeBatch(vs []T) error {
	view, bounds := w.part.View, &w.bounds
	for i := range vs {
		w.append(bounds.index(view(&vs[i])), &vs[i])
		if w.err != nil {
			return w.err
		}
	}
	return nil
}

// route appends v to its consumer's batch and sends the batch when full.
func (w *Writer[T]) route(v *T) error {
	if w.strategy == Broadcast {
		for c := range w.bufs {
			w.append(c, v)
		}
		return w.err
	}
	c := w.target(v)
	if c < 0 {
		return w.err
	}
	w.append(c, v)
	return w.err
}

func (w *Writer[T]) append(c int, v *T) {
	b := w.bufs[c]
	if b == nil {
		b = getBatch[T](w.x)
	}
	b = append(b, *v)
	w.bufs[c] = b
	if len(b) == w.x.batchSize && w.err == nil {
		w.err = w.send(c)
	}
}

// send hands consumer c's pending batch downstream (or to its store).
func (w *Writer[T]) send(c int) error {
	b := w.bufs[c]
	w.bufs[c] = nil
	return w.ship(c, wrap(b))
}

// ship hands batch b for consumer c downstream (or to its store).
func (w *producer) ship(c int, b rawBatch) error {
	w.gen[c]++
	if b.n == 0 {
		if b.p != nil {
			w.x.put(b)
		}
		return nil
	}
	met := w.tc.Metrics
	met.recordsOut.Add(int64(b.n))
	met.bytesOut.Add(int64(b.n) * w.x.elemSize)
	w.x.account(b)
	if w.x.mode == Blocking {
		if err := w.x.j.ctx.Err(); err != nil {
			w.x.put(b)
			return err
		}
		return w.x.stores[w.src][c].add(b, w)
	}
	return w.x.deliver(c, message{batch: b, src: w.src}, met)
}

// trySend is send without waiting for credit: the batch stays pending when
// the channel has none.
func (w *Writer[T]) trySend(c int) error {
	b := w.bufs[c]
	if len(b) == 0 || w.x.mode == Blocking {
		return w.send(c)
	}
	sent, err := w.tryShip(c, wrap(b))
	if sent {
		w.bufs[c] = nil
	}
	return err
}

// tryShip is ship on a pipelined edge without waiting for credit; sent
// false leaves b the caller's.
func (w *producer) tryShip(c int, b rawBatch) (sent bool, err error) {
	w.x.account(b)
	sent, err = w.x.tryDeliver(c, message{batch: b, src: w.src})
	if !sent {
		return false, nil
	}
	met := w.tc.Metrics
	met.recordsOut.Add(int64(b.n))
	met.bytesOut.Add(int64(b.n) * w.x.elemSize)
	w.gen[c]++
	return true, err
}

// Flush sends every pending batch now.
func (w *Writer[T]) Flush() error {
	w.lock()
	defer w.unlock()
	return w.flush()
}

func (w *Writer[T]) flush() error {
	for c := range w.bufs {
		if w.err != nil {
			return w.err
		}
		if len(w.bufs[c]) > 0 {
			w.err = w.send(c)
		}
	}
	return w.err
}

// Event flushes the pending batches and then sends e to every consumer this
// producer feeds (for Forward, its one consumer), with Source set to this
// subtask. Blocking and sampled Range edges carry no events: Event returns an
// error there. EndOfPartition is sent by the runtime only.
func (w *Writer[T]) Event(e Event) error {
	w.lock()
	defer w.unlock()
	if w.err != nil {
		return w.err
	}
	if err := checkEvent(w.x.e, w.x.mode, w.sampling, e); err != nil {
		return err
	}
	if err := w.flush(); err != nil {
		return err
	}
	w.err = w.broadcastEvent(e)
	return w.err
}

// checkEvent reports an event a writer of edge e in mode may not send;
// sampling is a sampled Range edge's first pass. It is untyped, so it is
// compiled once for every record type.
func checkEvent(e *edgeBase, mode ExchangeMode, sampling bool, ev Event) error {
	if ev.Kind == eventNone || ev.Kind == EndOfPartition || ev.Kind > WatermarkStatus {
		return fmt.Errorf("flow: edge %s: cannot send event %v", e.name, ev.Kind)
	}
	if mode == Blocking || sampling {
		return fmt.Errorf("flow: edge %s: %v event on a blocking edge", e.name, ev.Kind)
	}
	if ev.Kind == WatermarkStatus && ev.Value != StatusActive && ev.Value != StatusIdle {
		return fmt.Errorf("flow: edge %s: watermark status %d", e.name, ev.Value)
	}
	return nil
}

// checkPriorityEvent is checkEvent for PriorityEvent.
func checkPriorityEvent(e *edgeBase, mode ExchangeMode, sampling bool, ev Event) error {
	if ev.Kind != Barrier {
		return fmt.Errorf("flow: edge %s: %v cannot be a priority event", e.name, ev.Kind)
	}
	if mode == Blocking || sampling {
		return fmt.Errorf("flow: edge %s: %v event on a blocking edge", e.name, ev.Kind)
	}
	return nil
}

// PriorityEvent sends e (a Barrier) in front of every consumer's channel
// from this subtask, overtaking the batches queued there and the ones
// pending in the writer (Flink's priority events, for unaligned
// checkpoints): it takes no credit, so it never waits. It returns a copy
// of the records it overtook in the writer, by consumer, which still go
// out after it: they are the caller's output channel state. What it
// overtook in the channels the consumer persists (Gate.UnalignBarriers).
func (w *Writer[T]) PriorityEvent(e Event) ([][]T, error) {
	w.lock()
	defer w.unlock()
	if w.err != nil {
		return nil, w.err
	}
	if err := checkPriorityEvent(w.x.e, w.x.mode, w.sampling, e); err != nil {
		return nil, err
	}
	out := make([][]T, w.n)
	for c, b := range w.bufs {
		if len(b) > 0 {
			out[c] = append([]T(nil), b...)
		}
	}
	w.priority(e)
	return out, nil
}

// priority sends e in front of every consumer's channel from this subtask.
func (w *producer) priority(e Event) {
	e.Source = w.src
	if w.strategy == Forward {
		w.x.deliverPriority(w.src, message{ev: e, src: w.src})
		return
	}
	for c := 0; c < w.n; c++ {
		w.x.deliverPriority(c, message{ev: e, src: w.src})
	}
}

// EmitTo sends vs (copied) to consumer c, whatever the partitioner: a
// restored task resends its channel state to the consumer it was for.
func (w *Writer[T]) EmitTo(c int, vs []T) error {
	w.lock()
	defer w.unlock()
	if c < 0 || c >= w.n {
		return fmt.Errorf("flow: edge %s: no consumer %d of %d", w.x.e.name, c, w.n)
	}
	for i := range vs {
		if w.err != nil {
			return w.err
		}
		w.append(c, &vs[i])
	}
	return w.err
}

// Available reports whether every channel from this subtask has credit
// for a batch; when one has none it returns a channel that receives once
// that one's consumer freed a slot. A task checkpointing unaligned reads
// its next input only with its outputs available, so that it never waits
// for credit with an unaligned barrier at its inputs (Flink's output
// availability in the mailbox loop).
func (w *producer) Available() (bool, <-chan struct{}) {
	if w.x.mode == Blocking {
		return true, nil
	}
	if w.strategy == Forward {
		return w.x.hasCredit(w.src, w.src)
	}
	for c := 0; c < w.n; c++ {
		if ok, ch := w.x.hasCredit(c, w.src); !ok {
			return false, ch
		}
	}
	return true, nil
}

func (w *producer) broadcastEvent(e Event) error {
	e.Source = w.src
	if w.strategy == Forward {
		return w.x.deliver(w.src, message{ev: e, src: w.src}, w.tc.Metrics)
	}
	for c := 0; c < w.n; c++ {
		if err := w.x.deliver(c, message{ev: e, src: w.src}, w.tc.Metrics); err != nil {
			return err
		}
	}
	return nil
}

// flushIdle is the flusher's tick: it sends the batches that were already
// pending, unsent, at the previous tick. Ticks come every BufferTimeout/2, so a
// record waits at most about BufferTimeout.
func (w *Writer[T]) flushIdle() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil || w.done {
		return
	}
	for c := range w.bufs {
		if len(w.bufs[c]) > 0 && w.seenAny[c] && w.seenGen[c] == w.gen[c] {
			// never wait for credit holding the lock: the task's priority
			// events take it
			if w.err = w.trySend(c); w.err != nil {
				return
			}
		}
		w.seenGen[c] = w.gen[c]
		w.seenAny[c] = len(w.bufs[c]) > 0
	}
}

// needsFlusher reports whether the writer needs the task's flusher.
func (w *Writer[T]) needsFlusher() bool { return w.locking }

// finish closes the writer after the body returned nil: a sampled Range edge
// waits for every producer's sample and routes its buffered output, then the
// pending batches go out and every consumer gets EndOfPartition (a blocking
// edge's stores are complete instead).
func (w *Writer[T]) finish() error {
	w.lock()
	defer w.unlock()
	if w.err != nil {
		return w.err
	}
	if w.sampling {
		if w.err = w.replaySample(); w.err != nil {
			return w.err
		}
	}
	if err := w.flush(); err != nil {
		return err
	}
	return w.end()
}

// end marks the writer done and ends its partitions: every consumer gets
// EndOfPartition (a blocking edge's stores are complete instead).
func (w *producer) end() error {
	w.done = true
	x := w.x
	if x.mode == Blocking {
		x.finished(w.src)
		if x.pending.Add(-1) == 0 {
			close(x.ready)
		}
		return nil
	}
	w.err = w.broadcastEvent(Event{Kind: EndOfPartition})
	return w.err
}

// replaySample publishes the sample, waits for the bounds and routes the
// buffered records.
func (w *Writer[T]) replaySample() error {
	x := w.x
	local := x.locals[w.src]
	if len(w.local) > 0 {
		if err := local.add(wrap(w.local), &w.producer); err != nil {
			return err
		}
	}
	w.local = nil
	x.sampler.publish(w.src, w.res)
	if err := x.sample.send(x.j.ctx, w.src, w.res); err != nil {
		return err
	}
	select {
	case <-x.sampler.ready:
	case <-x.j.ctx.Done():
		return x.j.ctx.Err()
	}
	w.bounds = newRangeBounds(x.sampler.bounds)
	w.sampling = false
	it := newStoreReader(local)
	defer it.close()
	for {
		rb, err := it.next()
		if err != nil {
			return err
		}
		if rb.p == nil {
			return nil
		}
		b := unwrap[T](rb)
		for i := range b {
			if err := w.route(&b[i]); err != nil {
				return err
			}
		}
		x.put(rb)
	}
}

// spillAll spills every store this producer fills; the stores call it when
// their reservation cannot grow.
func (w *producer) spillAll() error {
	x := w.x
	if x.locals != nil && x.locals[w.src].state == storeFilling {
		if err := x.locals[w.src].spill(w); err != nil {
			return err
		}
	}
	if x.stores != nil {
		for _, s := range x.stores[w.src] {
			if err := s.spill(w); err != nil {
				return err
			}
		}
	}
	return nil
}

// abort closes the writer after its task failed: pending batches are dropped.
func (w *Writer[T]) abort() {
	w.lock()
	defer w.unlock()
	w.done = true
	for c, b := range w.bufs {
		if b != nil {
			putBatch(w.x, b)
			w.bufs[c] = nil
		}
	}
	if w.local != nil {
		putBatch(w.x, w.local)
		w.local = nil
	}
}
