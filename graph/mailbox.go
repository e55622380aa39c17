package graph

import "unsafe"

// mailbox holds the messages of one superstep. With a combiner, every worker
// combines what it sends into a dense array of one slot per vertex (and a
// bitset of the slots in use), and a reader combines a vertex's slots over
// the workers. Without one, every worker appends (target, message) pairs,
// and deliver groups them by target with a counting sort.
type mailbox[M any] struct {
	combine func(a, b M) M
	n       int
	slots   [][]M
	has     [][]uint64
	pairs   [][]pair[M]
	offsets []int64 // after deliver: the messages of v are msgs[offsets[v]:offsets[v+1]]
	msgs    []M

	// With a combiner and the reverse adjacency (rev*), a vertex that sends
	// one message to all its neighbours only records it (bval, bhas) and
	// its degree (bsent, per worker); settle then either pushes those
	// messages into the slots, when they are few, or leaves them for get to
	// pull over the vertex's in-neighbours (pull), as a hand-written loop
	// does.
	revOffsets []int64
	revTargets []uint32
	bval       []M
	bhas       []bool
	bsent      []broadcasts // per worker
	senders    int64        // vertices with edges: when all broadcast, pulling reads no bhas
	pull, full bool

	// fast is get for MinCombiner's and SumCombiner's messages, or nil
	fast func(v uint32, scratch []M) []M
}

// broadcasts counts a worker's broadcasting vertices and their edges. It
// fills a cache line, so that two workers counting per vertex do not write
// to one line.
type broadcasts struct {
	deg, cnt int64
	_        [48]byte
}

type pair[M any] struct {
	to  uint32
	msg M
}

// bytes returns the vertex-sized memory a mailbox of n vertices and workers
// holds, estimated.
func mailboxBytes[M any](n, workers int, combined bool) int64 {
	var m M
	if combined {
		return int64(workers) * int64(n) * (int64(unsafe.Sizeof(m)) + 1)
	}
	return 8 * int64(n+1)
}

func newMailbox[M any](n, workers int, combine func(a, b M) M) *mailbox[M] {
	b := &mailbox[M]{combine: combine, n: n}
	if combine != nil {
		b.slots, b.has = make([][]M, workers), make([][]uint64, workers)
		for w := range workers {
			b.slots[w] = make([]M, n)
			b.has[w] = make([]uint64, (n+63)/64)
		}
	} else {
		b.pairs = make([][]pair[M], workers)
		b.offsets = make([]int64, n+1)
	}
	if combine != nil {
		b.fast = fastGet(b)
	}
	return b
}

// pullable makes broadcasts recordable for pulling over the reverse
// adjacency offsets, targets.
func (b *mailbox[M]) pullable(offsets []int64, targets []uint32, workers int, senders int64) {
	b.revOffsets, b.revTargets, b.senders = offsets, targets, senders
	b.bval, b.bhas = make([]M, b.n), make([]bool, b.n)
	b.bsent = make([]broadcasts, workers)
}

// broadcast records that worker w's vertex v sends m to its deg neighbours;
// false when the mailbox cannot pull (the caller pushes).
func (b *mailbox[M]) broadcast(w int, v uint32, deg int64, m M) bool {
	if b.bhas == nil {
		return false
	}
	if deg > 0 {
		b.bval[v], b.bhas[v] = m, true
		b.bsent[w].deg += deg
		b.bsent[w].cnt++
	}
	return true
}

// settle decides, after a sending phase, how the recorded broadcasts are
// read: pulled when their edges are at least a sixteenth of the entries,
// else pushed now along out (the adjacency they were sent over, in memory)
// by the workers, each over its range of parts.
func (e *engine[K, VV, EV, M]) settle(b *mailbox[M]) error {
	b.pull, b.full = false, false
	if b.bhas == nil {
		return nil
	}
	total, count := int64(0), int64(0)
	for w := range b.bsent {
		total, count = total+b.bsent[w].deg, count+b.bsent[w].cnt
		b.bsent[w] = broadcasts{}
	}
	if total == 0 {
		return nil
	}
	if total*16 >= int64(len(b.revTargets)) {
		b.pull, b.full = true, count == b.senders
		return nil
	}
	ch, parts := e.g.adj.mem, e.parts
	return e.parallel(func(w int) {
		targets := ch.tgts()
		for v := parts[w]; v < parts[w+1]; v++ {
			if b.bhas[v] {
				b.sendAll(w, targets[ch.offsets[v]:ch.offsets[v+1]], b.bval[v])
				b.bhas[v] = false
			}
		}
	})
}

// send puts m for vertex to into worker w's part.
func (b *mailbox[M]) send(w int, to uint32, m M) {
	if b.combine == nil {
		b.pairs[w] = append(b.pairs[w], pair[M]{to, m})
		return
	}
	has, word, bit := b.has[w], to>>6, uint64(1)<<(to&63)
	if has[word]&bit != 0 {
		b.slots[w][to] = b.combine(b.slots[w][to], m)
		return
	}
	has[word] |= bit
	b.slots[w][to] = m
}

// sendAll puts m for every vertex of targets into worker w's part.
func (b *mailbox[M]) sendAll(w int, targets []uint32, m M) {
	if b.combine == nil {
		for _, t := range targets {
			b.pairs[w] = append(b.pairs[w], pair[M]{t, m})
		}
		return
	}
	slots, has, combine := b.slots[w], b.has[w], b.combine
	for _, t := range targets {
		word, bit := t>>6, uint64(1)<<(t&63)
		if has[word]&bit != 0 {
			slots[t] = combine(slots[t], m)
		} else {
			has[word] |= bit
			slots[t] = m
		}
	}
}

// sendEach puts msg(values[i]) for targets[i] into worker w's part.
func sendEach[M, EV any](b *mailbox[M], w int, targets []uint32, values []EV, msg func(EV) M) {
	if b.combine == nil {
		for i, t := range targets {
			b.pairs[w] = append(b.pairs[w], pair[M]{t, msg(values[i])})
		}
		return
	}
	slots, has, combine := b.slots[w], b.has[w], b.combine
	values = values[:len(targets)]
	for i, t := range targets {
		m := msg(values[i])
		word, bit := t>>6, uint64(1)<<(t&63)
		if has[word]&bit != 0 {
			slots[t] = combine(slots[t], m)
		} else {
			has[word] |= bit
			slots[t] = m
		}
	}
}

// sendGathered puts gather(val, values[i]) for targets[i] into worker w's
// part: gather-sum-apply's offers of one vertex.
func sendGathered[M, VV, EV any](b *mailbox[M], w int, targets []uint32, values []EV, val VV, gather func(VV, EV) M) {
	slots, has, combine := b.slots[w], b.has[w], b.combine
	values = values[:len(targets)]
	for i, t := range targets {
		m := gather(val, values[i])
		word, bit := t>>6, uint64(1)<<(t&63)
		if has[word]&bit != 0 {
			slots[t] = combine(slots[t], m)
		} else {
			has[word] |= bit
			slots[t] = m
		}
	}
}

// deliver makes the messages sent readable; it returns their number (pairs
// before combining are not counted here: the senders count them).
func (b *mailbox[M]) deliver() {
	if b.combine != nil {
		return
	}
	clear(b.offsets)
	total := 0
	for _, ps := range b.pairs {
		total += len(ps)
		for _, p := range ps {
			b.offsets[p.to+1]++
		}
	}
	for v := range b.n {
		b.offsets[v+1] += b.offsets[v]
	}
	if cap(b.msgs) < total {
		b.msgs = make([]M, total)
	}
	b.msgs = b.msgs[:total]
	next := make([]int64, b.n)
	copy(next, b.offsets)
	for _, ps := range b.pairs {
		for _, p := range ps {
			b.msgs[next[p.to]] = p.msg
			next[p.to]++
		}
	}
}

// get returns v's messages, combined into scratch's one element when a
// combiner is set; nil if none came.
func (b *mailbox[M]) get(v uint32, scratch []M) []M {
	if b.combine == nil {
		a, e := b.offsets[v], b.offsets[v+1]
		if a == e {
			return nil
		}
		return b.msgs[a:e]
	}
	if b.fast != nil {
		return b.fast(v, scratch)
	}
	word, bit := v>>6, uint64(1)<<(v&63)
	got := false
	if b.pull && b.full {
		// every in-neighbour broadcast
		in := b.revTargets[b.revOffsets[v]:b.revOffsets[v+1]]
		if len(in) > 0 {
			bval, combine := b.bval, b.combine
			acc := bval[in[0]]
			for _, u := range in[1:] {
				acc = combine(acc, bval[u])
			}
			scratch[0], got = acc, true
		}
	} else if b.pull {
		bhas, bval, combine := b.bhas, b.bval, b.combine
		for _, u := range b.revTargets[b.revOffsets[v]:b.revOffsets[v+1]] {
			if !bhas[u] {
				continue
			}
			if got {
				scratch[0] = combine(scratch[0], bval[u])
			} else {
				scratch[0], got = bval[u], true
			}
		}
	}
	for w, has := range b.has {
		if has[word]&bit == 0 {
			continue
		}
		if got {
			scratch[0] = b.combine(scratch[0], b.slots[w][v])
		} else {
			scratch[0], got = b.slots[w][v], true
		}
	}
	if !got {
		return nil
	}
	return scratch[:1]
}

// reset empties worker w's part for the next superstep, and the recorded
// broadcasts of the vertices [lo, hi).
func (b *mailbox[M]) reset(w int, lo, hi uint32) {
	if b.combine != nil {
		clear(b.has[w])
		if b.bhas != nil {
			clear(b.bhas[lo:hi])
		}
		return
	}
	clear(b.pairs[w])
	b.pairs[w] = b.pairs[w][:0]
}
