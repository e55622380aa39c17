package flow

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
)

// Remote places a job's subtasks in several processes. Each process starts
// the same graph (the same vertices and edges, built in the same order)
// with the same placement and runs only the subtasks Here names; the
// channels between a subtask here and one elsewhere go over the Transport.
//
// The channels keep the in-process contracts: per channel order, credit
// (a channel out of credit stops its producer alone, across the network
// too), events in band, EndOfPartition last. Records cross as their
// edge's codec writes them, so every edge with a channel between
// processes needs a codec. A sampled Range edge's producers share their
// samples across processes, so every process computes the same bounds
// (remote_sample.go). A priority event (an unaligned barrier) overtakes
// the messages queued in the consumer's inbox and the records pending in
// the producer's Writer, as in one process, but not the frames on their
// way between the processes: it goes after them, in order, and is put in
// front of the consumer's queue when it arrives. Its checkpoint is as
// exact; under backpressure it waits for at most the channel's credit of
// frames.
//
// A blocking edge's result stays with its producer: a producer subtask
// fills its stores (spilling them to its disk) as in one process, and once
// it finished it sends each consumer elsewhere its store over that
// consumer's channel. The consumer reads its producers' results one after
// the other, as in one process, pulling a remote one off its channel
// while the other channels wait, blocked, for their turn.
//
// An Iteration's superstep barrier is shared memory: the subtasks of an
// iteration must run in one process. A job's Metrics, Progress and
// Result hold the subtasks of this process; the others' are zero. A
// job that fails in one process fails the others only through a broken
// connection: whoever runs the processes cancels the rest.
type Remote struct {
	// Here reports whether subtask i of vertex v (numbered in the order
	// Graph.Vertex added them) runs in this process.
	Here func(v, i int) bool
	// Transport carries the channels between processes.
	Transport Transport
}

// Channel names one channel between processes: producer subtask Producer
// of vertex From to consumer subtask Consumer of vertex To over edge Edge
// (edges numbered in the order Connect added them).
type Channel struct {
	Edge, From, To     int
	Producer, Consumer int
}

// Transport carries the channels of a job between processes.
type Transport interface {
	// Open opens the producer end of ch; the consumer's process may
	// register its end before or after.
	Open(ctx context.Context, ch Channel) (Sender, error)
	// Inbox registers the consumer end of consumer subtask consumer of
	// edge: a channel for each of producers subtasks, each holding at
	// most capacity frames (the credit its producer starts with).
	Inbox(edge, consumer, producers, capacity int) (Receiver, error)
}

// Sender is the producer end of a channel between processes.
type Sender interface {
	// Send sends an encoded batch once the channel has credit; the caller
	// keeps b. A consumer that ended drops it.
	Send(ctx context.Context, b []byte) error
	// SendEvent sends an event of kind (Watermark, Barrier,
	// EndOfSuperstep, WatermarkStatus) with its payload, against credit.
	SendEvent(ctx context.Context, kind EventKind, b []byte) error
	// Close sends EndOfPartition after everything sent before.
	Close(ctx context.Context) error
}

// Receiver is the consumer end of an edge's channels between processes.
type Receiver interface {
	// Poll calls f with the next frame of a channel that is not blocked
	// and reports whether there was one; it never waits. A data frame has
	// kind 0 (no event); EndOfPartition is the last frame of a channel.
	// b is valid during the call only. Taking a frame grants its producer
	// a credit. An error means a channel's connection broke.
	Poll(f func(producer int, kind EventKind, b []byte) error) (bool, error)
	// Ready receives when a frame may be available to Poll.
	Ready() <-chan struct{}
	// Block stops reading channel p; Unblock reads it again.
	Block(p int)
	Unblock(p int)
	// Close ends the consumer: its producers drop what they send.
	Close()
}

// SlotPart returns the process that holds slot i modulo the slots of all,
// the processes' slots numbered process by process: the placement of a
// spread job, whose subtask i of every operator shares slot i (Flink's
// slot sharing).
func SlotPart(slots []int, i int) int {
	total := 0
	for _, n := range slots {
		total += n
	}
	i %= total
	for p, n := range slots {
		if i < n {
			return p
		}
		i -= n
	}
	return len(slots) - 1
}

// CheckSlots checks that part is a process of slots and that each has a
// slot at least.
func CheckSlots(part int, slots []int) error {
	if len(slots) == 0 {
		return errors.New("no processes")
	}
	if part < 0 || part >= len(slots) {
		return fmt.Errorf("part %d of %d processes", part, len(slots))
	}
	for i, n := range slots {
		if n <= 0 {
			return fmt.Errorf("process %d has %d slots", i, n)
		}
	}
	return nil
}

// here reports whether subtask i of v runs in this process.
func (j *job) here(v *Vertex, i int) bool {
	return j.opts.Remote == nil || j.opts.Remote.Here(v.index, i)
}

// remoteLinks says which channels of an edge cross processes: the
// consumers elsewhere fed by a producer here, and the consumers here fed
// by a producer elsewhere.
func (e *edgeBase) remoteLinks(j *job) (out, in bool) {
	if j.opts.Remote == nil {
		return false, false
	}
	for c := 0; c < e.to.parallelism; c++ {
		for p := 0; p < e.from.parallelism; p++ {
			if !e.feeds(p, c) {
				continue
			}
			hp, hc := j.here(e.from, p), j.here(e.to, c)
			out = out || hp && !hc
			in = in || !hp && hc
		}
	}
	return out, in
}

// feeds reports whether producer subtask p sends to consumer subtask c:
// every pair but on a FORWARD edge, where only p == c.
func (e *edgeBase) feeds(p, c int) bool { return e.strategy != Forward || p == c }

// checkRemote reports an edge whose channels cross processes but cannot.
func (e *edgeBase) checkRemote(j *job) error {
	out, in := e.remoteLinks(j)
	if !out && !in {
		return nil
	}
	switch {
	case !e.hasCodec:
		return fmt.Errorf("flow: edge %s crosses processes and has no codec", e.name)
	}
	return nil
}

// The payload of an event frame: Value and Meta, little-endian.
const eventPayload = 16

// remotePriority marks the kind of an event frame that is a priority event
// (an unaligned barrier): it travels in order, after the frames its
// channel sent before it, and the consumer's process puts it in front of
// the messages its inbox queued.
const remotePriority EventKind = 0x80

func putEvent(b []byte, ev Event) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(ev.Value))
	return binary.LittleEndian.AppendUint64(b, uint64(ev.Meta))
}

func readEvent(kind EventKind, src int, b []byte) (Event, error) {
	if len(b) != eventPayload {
		return Event{}, fmt.Errorf("%v event of %d bytes, want %d", kind, len(b), eventPayload)
	}
	return Event{Kind: kind, Value: int64(binary.LittleEndian.Uint64(b)), Meta: int64(binary.LittleEndian.Uint64(b[8:])), Source: src}, nil
}

// remoteIO is an exchange's channels between processes.
type remoteIO struct {
	out []bool     // consumer c runs elsewhere and a producer here feeds it
	rcv []Receiver // consumer c runs here and a producer elsewhere feeds it
	// remote[c] counts the producers elsewhere feeding consumer c here
	remote []int
	// credit[c] receives when consumer c frees a slot of a channel from
	// elsewhere that its pump found full
	credit []chan struct{}
	// fin[p] is closed when producer p here finished a blocking edge
	fin []chan struct{}
}

// startRemote prepares the exchange's channels between processes: the
// inboxes of consumers elsewhere become outboxes that forwarders drain,
// and each consumer here with producers elsewhere registers a Receiver.
func (x *exchange) startRemote() error {
	j, e := x.j, x.e
	if j.opts.Remote != nil && x.mode == Blocking {
		// the stores are ready once the producers here finished, whether
		// or not a channel crosses; the others' results come over the
		// channels
		local := 0
		for p := range x.nProd {
			if j.here(e.from, p) {
				local++
			}
		}
		x.pending.Store(int32(local))
		if local == 0 {
			close(x.ready)
		}
	}
	out, in := e.remoteLinks(j)
	if !out && !in {
		return nil
	}
	r := &remoteIO{out: make([]bool, x.nCons), rcv: make([]Receiver, x.nCons), remote: make([]int, x.nCons), credit: make([]chan struct{}, x.nCons)}
	x.remote = r
	if x.mode == Blocking {
		r.fin = make([]chan struct{}, x.nProd)
		for p := range r.fin {
			r.fin[p] = make(chan struct{})
		}
	}
	for c := 0; c < x.nCons; c++ {
		hc := j.here(e.to, c)
		for p := 0; p < x.nProd; p++ {
			if !e.feeds(p, c) {
				continue
			}
			hp := j.here(e.from, p)
			if hp && !hc {
				r.out[c] = true
			}
			if !hp && hc {
				r.remote[c]++
			}
		}
		if r.out[c] && x.mode == Pipelined {
			ob := x.inbox[c]
			ob.outbox = true
			for p := range ob.chans {
				ob.chans[p].notify = make(chan struct{}, 1)
			}
		}
		if r.remote[c] > 0 && x.mode == Pipelined {
			r.credit[c] = make(chan struct{}, 1)
			for p := range x.inbox[c].chans {
				if !j.here(e.from, p) {
					x.inbox[c].chans[p].credit = r.credit[c]
				}
			}
		}
		if r.remote[c] > 0 {
			rcv, err := j.opts.Remote.Transport.Inbox(e.index, c, x.nProd, j.opts.ChannelBuffers)
			if err != nil {
				return fmt.Errorf("flow: edge %s consumer %d: %w", e.name, c, err)
			}
			r.rcv[c] = rcv
		}
	}
	return nil
}

// closeRemote closes the receivers left open.
func (x *exchange) closeRemote() {
	x.sample.close()
	if x.remote == nil {
		return
	}
	for _, rcv := range x.remote.rcv {
		if rcv != nil {
			rcv.Close()
		}
	}
}

// runRemote starts the exchange's forwarders and pumps on the job's
// background group.
func (x *exchange) runRemote() {
	r := x.remote
	if r == nil {
		return
	}
	j, e := x.j, x.e
	for c := 0; c < x.nCons; c++ {
		if r.out[c] {
			for p := 0; p < x.nProd; p++ {
				if !e.feeds(p, c) || !j.here(e.from, p) {
					continue
				}
				j.bg.Add(1)
				go func() {
					defer j.bg.Done()
					if err := x.forward(p, c); err != nil {
						j.fail(fmt.Errorf("flow: edge %s channel %d->%d: %w", e.name, p, c, err))
					}
				}()
			}
		}
		if r.rcv[c] != nil && x.mode == Pipelined {
			j.bg.Add(1)
			go func() {
				defer j.bg.Done()
				if err := x.pump(c); err != nil {
					j.fail(fmt.Errorf("flow: edge %s consumer %d: %w", e.name, c, err))
				}
			}()
		}
	}
}

// forward sends channel (p, c) of an outbox over the transport until its
// EndOfPartition went, encoding each batch with the edge's codec.
func (x *exchange) forward(p, c int) error {
	ctx := x.j.ctx
	e := x.e
	snd, err := x.j.opts.Remote.Transport.Open(ctx, Channel{Edge: e.index, From: e.from.index, To: e.to.index, Producer: p, Consumer: c})
	if err != nil {
		return err
	}
	if x.mode == Blocking {
		return x.forwardStore(ctx, snd, p, c)
	}
	ob := x.inbox[c]
	ch := &ob.chans[p]
	var buf []byte
	for {
		m, prio, ok := ob.takeFrom(p)
		if !ok {
			select {
			case <-ch.notify:
				continue
			case <-ctx.Done():
				return nil
			}
		}
		switch {
		case prio:
			buf = putEvent(buf[:0], m.ev)
			err = snd.SendEvent(ctx, m.ev.Kind|remotePriority, buf)
		case m.ev.Kind == eventNone:
			buf = x.codec.encode(buf[:0], m.batch)
			x.put(m.batch)
			err = snd.Send(ctx, buf)
		case m.ev.Kind == EndOfPartition:
			return snd.Close(ctx)
		default:
			buf = putEvent(buf[:0], m.ev)
			err = snd.SendEvent(ctx, m.ev.Kind, buf)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// pump moves the frames of consumer c's producers elsewhere into its
// inbox, decoded. A channel whose inbox queue is full is blocked on the
// Receiver until the consumer frees a slot, so it stops only its own
// producer. It returns once every producer elsewhere ended. A consumer
// that ended early drops what comes (its inbox is closed): the channels
// stay open to their end, since a producer that opens its channel after
// the consumer's end would otherwise wait for credit that never comes.
func (x *exchange) pump(c int) error {
	j := x.j
	rcv := x.remote.rcv[c]
	in := x.inbox[c]
	credit, done := x.remote.credit[c], x.done[c]
	pending := make([]message, x.nProd)
	held := make([]bool, x.nProd)
	nHeld, live := 0, x.remote.remote[c]
	var ferr error
	take := func(p int, kind EventKind, b []byte) error {
		if p < 0 || p >= x.nProd {
			return fmt.Errorf("frame from producer %d of %d", p, x.nProd)
		}
		m := message{src: p}
		switch kind {
		case 0:
			batch, err := x.decodeBatch(p, b)
			if err != nil {
				return err
			}
			m.batch = batch
		case EndOfPartition:
			m.ev = Event{Kind: EndOfPartition, Source: p}
		default:
			ev, err := readEvent(kind&^remotePriority, p, b)
			if err != nil {
				return fmt.Errorf("producer %d: %w", p, err)
			}
			m.ev = ev
			if kind&remotePriority != 0 {
				// in front of what the channel queued here: every message
				// before it on the channel came before it (a held one
				// blocks the channel, so this frame waited behind it)
				x.deliverPriority(c, m)
				return nil
			}
		}
		if !in.offer(m, x) {
			pending[p], held[p] = m, true
			nHeld++
			rcv.Block(p)
		} else if kind == EndOfPartition {
			live--
		}
		return nil
	}
	for live > 0 {
		// hand over what waited for a slot
		if nHeld > 0 {
			for p := range held {
				if held[p] && in.offer(pending[p], x) {
					if pending[p].ev.Kind == EndOfPartition {
						live--
					}
					pending[p], held[p] = message{}, false
					nHeld--
					rcv.Unblock(p)
				}
			}
			if live == 0 {
				break
			}
		}
		ok, err := rcv.Poll(func(p int, kind EventKind, b []byte) error {
			ferr = take(p, kind, b)
			return ferr
		})
		if ferr != nil {
			return ferr
		}
		if err != nil {
			if j.ctx.Err() != nil {
				return nil
			}
			return err
		}
		if ok {
			continue
		}
		select {
		case <-rcv.Ready():
		case <-credit:
		case <-done:
			// the consumer ended without freeing the slots a held
			// message waits for: its inbox drops them now
			done = nil
		case <-j.ctx.Done():
			for p := range held {
				if held[p] {
					x.put(pending[p].batch)
				}
			}
			return nil
		}
	}
	return nil
}

// forwardStore sends producer p's store for consumer c over snd once p
// finished: its spill files, then what it holds in memory, then
// EndOfPartition.
func (x *exchange) forwardStore(ctx context.Context, snd Sender, p, c int) error {
	select {
	case <-x.remote.fin[p]:
	case <-ctx.Done():
		return nil
	}
	it := newStoreReader(x.stores[p][c])
	defer it.close()
	var buf []byte
	for {
		b, err := it.next()
		if err != nil {
			return err
		}
		if b.p == nil {
			break
		}
		buf = x.codec.encode(buf[:0], b)
		x.put(b)
		if err := snd.Send(ctx, buf); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	if err := snd.Close(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// finished tells the forwarders of a blocking edge that producer p
// finished.
func (x *exchange) finished(p int) {
	if x.remote != nil && x.remote.fin != nil {
		close(x.remote.fin[p])
	}
}

// decodeBatch decodes a data frame of producer p into a batch.
func (x *exchange) decodeBatch(p int, b []byte) (rawBatch, error) {
	batch, err := x.codec.decode(x.get(), b)
	if err != nil {
		x.put(batch)
		return rawBatch{}, fmt.Errorf("producer %d: %w", p, err)
	}
	return batch, nil
}

// recvRemote returns the next message of producer p's blocking result,
// which arrives over consumer c's Receiver: only p's channel is read, the
// others wait blocked for their turn.
func (r *consumer) recvRemote(ctx context.Context, p int) (message, error) {
	x := r.x
	rcv := x.remote.rcv[r.c]
	if !r.pulling {
		for q := range x.nProd {
			if q != p {
				rcv.Block(q)
			}
		}
		rcv.Unblock(p)
		r.pulling = true
	}
	var m message
	var ferr error
	for {
		ok, err := rcv.Poll(func(src int, kind EventKind, b []byte) error {
			if src != p {
				ferr = fmt.Errorf("flow: edge %s: a frame of producer %d while reading producer %d", x.e.name, src, p)
				return ferr
			}
			switch kind {
			case 0:
				m.batch, ferr = x.decodeBatch(p, b)
				if ferr != nil {
					ferr = fmt.Errorf("flow: edge %s: %w", x.e.name, ferr)
				}
			case EndOfPartition:
				m.ev = Event{Kind: EndOfPartition, Source: p}
			default:
				ferr = fmt.Errorf("flow: edge %s: %v event from producer %d on a blocking edge", x.e.name, kind, p)
			}
			m.src = p
			return ferr
		})
		if ferr != nil {
			return message{}, ferr
		}
		if err != nil {
			return message{}, fmt.Errorf("flow: edge %s: %w", x.e.name, err)
		}
		if ok {
			if m.ev.Kind == EndOfPartition {
				r.pulling = false
			}
			return m, nil
		}
		select {
		case <-rcv.Ready():
		case <-ctx.Done():
			return message{}, ctx.Err()
		case <-x.j.ctx.Done():
			return message{}, x.j.ctx.Err()
		}
	}
}

// drainRemote drops what the producers elsewhere still send to consumer c
// of a blocking edge whose reader ended before their ends: n of them had
// not ended. It runs on the job's background group.
func (x *exchange) drainRemote(c, n int) {
	j := x.j
	rcv := x.remote.rcv[c]
	for p := range x.nProd {
		rcv.Unblock(p)
	}
	j.bg.Add(1)
	go func() {
		defer j.bg.Done()
		for n > 0 {
			ok, err := rcv.Poll(func(_ int, kind EventKind, _ []byte) error {
				if kind == EndOfPartition {
					n--
				}
				return nil
			})
			if err != nil {
				if j.ctx.Err() == nil {
					j.fail(fmt.Errorf("flow: edge %s consumer %d: %w", x.e.name, c, err))
				}
				return
			}
			if ok {
				continue
			}
			select {
			case <-rcv.Ready():
			case <-j.ctx.Done():
				return
			}
		}
	}()
}
