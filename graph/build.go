package graph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
	"unsafe"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/spill"
)

// builder builds an iteration's dense ids and adjacency as its input comes:
// the vertices first, indexed when they end; then the edges a batch at a
// time, each edge's keys translated into dense ids (in the iteration's
// direction) and the dense edges kept in fixed blocks while the reservation
// grants them, written to a spill run once it refuses (see spillEdges).
// finish places them by a parallel counting sort: the workers count the
// entries of their share of the blocks by key, a prefix sum over the
// vertices and workers gives each worker its cursors, and the workers place
// their entries at them.
type builder[K comparable, VV, EV any] struct {
	res   *memory.Reservation
	space *spill.Space
	dir   Direction
	// reverse asks for the reverse adjacency (targets only) too, when the
	// reservation grants it, for pulling broadcast messages
	reverse bool
	// workers is the number of goroutines that place the entries
	workers int
	// bucketed says the reverse was placed by buckets (reverseBuckets)
	bucketed bool

	ids    []K
	vals   []VV
	forced int // vertices reserved
	x      *keyIndex[K]

	// cnt has n+1 slots: the offsets of the adjacency in memory; once
	// spilling, cnt[v+1] counts vertex v's entries in the run (both ends of
	// an edge for All)
	cnt []int64
	// the dense edges in memory, in blocks of blockEdges: (key, target) in
	// the iteration's direction, and their values
	pairs    [][]dense
	evs      [][]EV
	kept     int64   // the edges in the blocks
	buffered int64   // bytes reserved for the blocks
	ps       []dense // a batch's kept edges
	ev       []EV

	run *spill.Writer // the dense entries, once spilling, in blocks of entries
	evc *memory.Codec[EV]
	rec []byte // the block being filled (see put)

	took time.Duration // the time spent building, waiting for input excluded

	// after is what the iteration reserves once the graph is built (the
	// mailbox): spilled edges are placed into one chunk held in memory only
	// when the reservation grants it and this besides
	after int64
	// held says the edges went to a run and the adjacency is in memory
	held bool
}

// dense is an edge as the dense ids of its entry's key and target.
type dense struct{ s, t uint32 }

const grant = 4096 // vertices reserved at a time

// blockEdges is the number of edges of one block (a variable for tests).
var blockEdges = 1 << 16

func (b *builder[K, VV, EV]) vertexBytes() int64 {
	var k K
	var vv VV
	return int64(unsafe.Sizeof(k)) + int64(unsafe.Sizeof(vv))
}

func (b *builder[K, VV, EV]) blockBytes() int64 {
	var ev EV
	return int64(blockEdges) * (8 + int64(unsafe.Sizeof(ev)))
}

// addVertices takes a batch of vertices; all come before the first edge.
func (b *builder[K, VV, EV]) addVertices(vs []Vertex[K, VV]) {
	start := time.Now()
	for len(b.ids)+len(vs) > b.forced {
		// vertex-sized state is the minimum an iteration needs: forced
		b.res.Force(grant * b.vertexBytes())
		b.forced += grant
	}
	for i := range vs {
		b.ids = append(b.ids, vs[i].ID)
		b.vals = append(b.vals, vs[i].Value)
	}
	b.took += time.Since(start)
}

// index gives the vertices their dense ids, after the last vertex.
func (b *builder[K, VV, EV]) index() error {
	start := time.Now()
	defer func() { b.took += time.Since(start) }()
	x, ids, vals := newKeyIndex(b.ids, b.vals)
	b.res.Force(x.bytes())
	b.x, b.ids, b.vals = x, ids, vals
	n := int64(len(ids))
	if n >= int64(absent) {
		return fmt.Errorf("%d vertices: at most %d", n, absent-1)
	}
	b.cnt = make([]int64, n+1)
	b.res.Force(8 * (n + 1))
	return nil
}

// compact writes the batch's edges whose ends are both vertices to ps and
// their values to evs, as dense ids in the iteration's direction, and
// returns their number.
func (b *builder[K, VV, EV]) compact(es []Edge[K, EV], ps []dense, evs []EV) int {
	x, in, k := b.x, b.dir == In, 0
	switch {
	case x.dense:
		// int64 keys of one range: the id is the key less the base
		ks := any(es).([]Edge[int64, EV])
		base, n := x.base, uint64(x.n)
		for i := range ks {
			s, d := uint64(ks[i].Src-base), uint64(ks[i].Dst-base)
			if s >= n || d >= n {
				continue
			}
			if in {
				s, d = d, s
			}
			ps[k], evs[k] = dense{uint32(s), uint32(d)}, ks[i].Value
			k++
		}
	case x.table != nil:
		// int64 keys through the table, without a conversion per key
		ks := any(es).([]Edge[int64, EV])
		base, t := x.base, x.table
		for i := range ks {
			s, d := uint64(ks[i].Src-base), uint64(ks[i].Dst-base)
			if s >= uint64(len(t)) || d >= uint64(len(t)) {
				continue
			}
			sd, td := t[s]-1, t[d]-1
			if sd == absent || td == absent {
				continue
			}
			if in {
				sd, td = td, sd
			}
			ps[k], evs[k] = dense{sd, td}, ks[i].Value
			k++
		}
	default:
		for i := range es {
			sd, td := x.lookup(es[i].Src), x.lookup(es[i].Dst)
			if sd == absent || td == absent {
				continue
			}
			if in {
				sd, td = td, sd
			}
			ps[k], evs[k] = dense{sd, td}, es[i].Value
			k++
		}
	}
	return k
}

// addEdges takes a batch of edges: it keeps them as dense ids, in a block
// or in the spill run.
func (b *builder[K, VV, EV]) addEdges(es []Edge[K, EV]) error {
	start := time.Now()
	defer func() { b.took += time.Since(start) }()
	if cap(b.ps) < len(es) {
		b.ps, b.ev = make([]dense, len(es)), make([]EV, len(es))
	}
	k := b.compact(es, b.ps[:len(es)], b.ev[:len(es)])
	return b.keep(b.ps[:k], b.ev[:k])
}

// keep puts the dense edges ps with their values evs into the blocks, or
// into the spill run once the reservation refuses a block.
func (b *builder[K, VV, EV]) keep(ps []dense, evs []EV) error {
	for len(ps) > 0 {
		if b.run != nil {
			for j, p := range ps {
				if err := b.write(p.s, p.t, &evs[j]); err != nil {
					return err
				}
			}
			return nil
		}
		last := len(b.pairs) - 1
		if last < 0 || len(b.pairs[last]) == blockEdges {
			if err := b.res.Grow(b.blockBytes()); err != nil {
				if err := b.spillEdges(); err != nil {
					return err
				}
				continue
			}
			b.buffered += b.blockBytes()
			b.pairs = append(b.pairs, make([]dense, 0, blockEdges))
			b.evs = append(b.evs, make([]EV, 0, blockEdges))
			continue
		}
		m := min(blockEdges-len(b.pairs[last]), len(ps))
		b.pairs[last] = append(b.pairs[last], ps[:m]...)
		b.evs[last] = append(b.evs[last], evs[:m]...)
		b.kept += int64(m)
		ps, evs = ps[m:], evs[m:]
	}
	return nil
}

// spillEdges starts the spill run of dense entries, writes the blocks to it
// and frees them.
func (b *builder[K, VV, EV]) spillEdges() error {
	c, err := memory.NewCodec[EV]()
	if err != nil {
		return fmt.Errorf("the edges outgrow the budget and cannot be spilled: %w", err)
	}
	b.evc = c
	if b.run, err = b.space.Create(); err != nil {
		return err
	}
	for i, ps := range b.pairs {
		for j, p := range ps {
			if err := b.write(p.s, p.t, &b.evs[i][j]); err != nil {
				return err
			}
		}
	}
	b.pairs, b.evs, b.kept = nil, nil, 0
	b.res.Shrink(b.buffered)
	b.buffered = 0
	return nil
}

// write appends the entry (s, t) and its value to the run, and (t, s) for
// All: what writeRange reads.
func (b *builder[K, VV, EV]) write(s, t uint32, ev *EV) error {
	if err := b.put(s, t, ev); err != nil {
		return err
	}
	if b.dir == All {
		return b.put(t, s, ev)
	}
	return nil
}

// denseBlock is the size at which a block of dense entries goes to the run
// as one record.
const denseBlock = 64 << 10

// put appends the entry (s, t) and its value to the block being filled, and
// the block to the run once it holds denseBlock bytes. An entry is s and t
// (4 bytes each, little-endian), then the value: its encoding for a flat
// value type (none for a zero-size one), its length as a uvarint and its
// encoding otherwise, so that writeRange steps over the entries of other
// ranges without decoding them.
func (b *builder[K, VV, EV]) put(s, t uint32, ev *EV) error {
	b.cnt[s+1]++
	b.rec = binary.LittleEndian.AppendUint32(b.rec, s)
	b.rec = binary.LittleEndian.AppendUint32(b.rec, t)
	if b.evc.Flat() {
		b.rec = b.evc.Append(b.rec, ev)
	} else {
		at := len(b.rec)
		b.rec = b.evc.Append(append(b.rec, 0), ev) // a byte for the length first
		b.rec = appendSized(b.rec, at)
	}
	if len(b.rec) < denseBlock {
		return nil
	}
	return b.flushDense()
}

// flushDense appends the block being filled to the run.
func (b *builder[K, VV, EV]) flushDense() error {
	if len(b.rec) == 0 {
		return nil
	}
	err := b.run.Append(b.rec)
	b.rec = b.rec[:0]
	return err
}

// abort removes what a failed build left.
func (b *builder[K, VV, EV]) abort() {
	if b.run != nil {
		b.run.Abort()
		b.run = nil
	}
}

// graphData is an iteration's vertices in dense order and its adjacency.
type graphData[K comparable, VV, EV any] struct {
	ids     []K
	values  []VV
	index   *keyIndex[K]
	adj     *adjacency[EV]
	rev     *chunk[EV] // the reverse adjacency without values, or nil
	entries int64
}

// finish builds the adjacency after the last edge: in memory by a counting
// sort when the reservation grants it, else in spilled chunks.
func (b *builder[K, VV, EV]) finish() (*graphData[K, VV, EV], error) {
	start := time.Now()
	defer func() { b.took += time.Since(start) }()
	g := &graphData[K, VV, EV]{ids: b.ids, values: b.vals, index: b.x}
	n := len(b.ids)
	if b.run == nil {
		entries := b.kept
		if b.dir == All {
			entries *= 2
		}
		if err := b.res.Grow(entries * entryBytes[EV]()); err == nil {
			g.adj, g.rev, g.entries = b.inMemory(n, entries)
			b.res.Shrink(b.buffered)
			b.buffered = 0
			return g, nil
		}
		if err := b.spillEdges(); err != nil {
			return nil, err
		}
	}
	adj, entries, err := b.spilled(n)
	if err != nil {
		return nil, err
	}
	g.adj, g.entries = adj, entries
	return g, nil
}

// inMemory places the blocks' entries by a parallel counting sort by key,
// and the reverse adjacency by target in the same passes when asked for
// and granted. Worker w takes a contiguous range of blocks, so that a
// vertex's entries keep the order in which its edges came.
func (b *builder[K, VV, EV]) inMemory(n int, entries int64) (*adjacency[EV], *chunk[EV], int64) {
	all := b.dir == All
	rev := b.reverse && !all && b.res.Grow(4*entries+8*int64(n+1)) == nil
	workers := max(b.workers, 1)
	// the workers' cursors, vertex-sized: forced while placing
	arrays := int64(workers)
	if rev {
		arrays *= 2
	}
	cursors := arrays * 8 * int64(n)
	b.res.Force(cursors)
	defer b.res.Shrink(cursors)
	cur, rcur := make([][]int64, workers), make([][]int64, workers)
	parts := make([]int, workers+1)
	for w := range workers {
		cur[w] = make([]int64, n)
		if rev {
			rcur[w] = make([]int64, n)
		}
		parts[w+1] = len(b.pairs) * (w + 1) / workers
	}
	parallel(workers, func(w int) {
		for _, ps := range b.pairs[parts[w]:parts[w+1]] {
			count(cur[w], rcur[w], ps, all, rev)
		}
	})
	// a large reverse is placed bucket by bucket of targets (cache-sized
	// ranges of the reverse's entries), when the copy of the entries it
	// takes is granted
	var buckets *reverseBuckets
	if rev && entries >= minBucketed && b.res.Grow(8*entries) == nil {
		defer b.res.Shrink(8 * entries)
		buckets = newReverseBuckets(n, rcur)
		b.bucketed = true
	}
	offsets := b.cnt
	b.cnt = nil
	prefix(offsets, cur)
	var roffsets []int64
	if rev {
		roffsets = make([]int64, n+1)
		prefix(roffsets, rcur)
	}
	// without values the reverse holds all the forward adjacency says: its
	// targets are placed from it when first needed (pulling needs none)
	var ev EV
	lazy := rev && unsafe.Sizeof(ev) == 0
	var targets, rtargets []uint32
	if !lazy {
		targets = make([]uint32, entries)
	}
	values := make([]EV, entries)
	if rev {
		rtargets = make([]uint32, entries)
	}
	parallel(workers, func(w int) {
		for i, ps := range b.pairs[parts[w]:parts[w+1]] {
			if !lazy {
				place(cur[w], targets, values, ps, b.evs[parts[w]+i], all)
			}
			if rev && buckets == nil {
				placeReverse(rcur[w], rtargets, ps)
			}
		}
		if buckets != nil {
			buckets.place(w, rcur[w], rtargets, b.pairs[parts[w]:parts[w+1]])
		}
	})
	c := &chunk[EV]{lo: 0, hi: uint32(n), offsets: offsets, targets: targets, values: values}
	var rc *chunk[EV]
	switch {
	case rev:
		rc = &chunk[EV]{lo: 0, hi: uint32(n), offsets: roffsets, targets: rtargets}
	case all && b.reverse:
		rc = c // its own reverse
	}
	if lazy {
		res := b.res
		c.lazy = &lazyTargets{fill: func() { c.targets = transpose(res, offsets, roffsets, rtargets) }}
	}
	b.pairs, b.evs, b.kept = nil, nil, 0
	return &adjacency[EV]{mem: c}, rc, entries
}

// transpose returns the targets of the adjacency of offsets whose reverse
// is roffsets and rtargets: a vertex's targets in the order of their ids.
// Its cursors are vertex-sized, forced on res while it runs.
func transpose(res *memory.Reservation, offsets, roffsets []int64, rtargets []uint32) []uint32 {
	n := len(offsets) - 1
	res.Force(8 * int64(n))
	defer res.Shrink(8 * int64(n))
	next := make([]int64, n)
	copy(next, offsets[:n])
	targets := make([]uint32, len(rtargets))
	for t := range n {
		for _, s := range rtargets[roffsets[t]:roffsets[t+1]] {
			targets[next[s]] = uint32(t)
			next[s]++
		}
	}
	return targets
}

// parallel runs fn(w) for w in [0, workers) on as many goroutines.
func parallel(workers int, fn func(w int)) {
	if workers == 1 {
		fn(0)
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { fn(w) })
	}
	wg.Wait()
}

// count counts the entries ps by key into c (both ends when all) and, when
// rev, by target into rc.
func count(c, rc []int64, ps []dense, all, rev bool) {
	switch {
	case all:
		for _, p := range ps {
			c[p.s]++
			c[p.t]++
		}
	case rev:
		for _, p := range ps {
			c[p.s]++
			rc[p.t]++
		}
	default:
		for _, p := range ps {
			c[p.s]++
		}
	}
}

// prefix sets offsets (n+1) to the starts of the vertices' entries counted
// by the workers in cur (n each), and turns each worker's counts into its
// cursors: worker w places vertex v's entries after those of the workers
// before it.
func prefix(offsets []int64, cur [][]int64) {
	n, acc := len(offsets)-1, int64(0)
	if len(cur) == 2 {
		c0, c1 := cur[0][:n], cur[1][:n]
		for v := range n {
			offsets[v] = acc
			a, b := c0[v], c1[v]
			c0[v], c1[v] = acc, acc+a
			acc += a + b
		}
		offsets[n] = acc
		return
	}
	for v := range n {
		offsets[v] = acc
		for _, c := range cur {
			k := c[v]
			c[v] = acc
			acc += k
		}
	}
	offsets[n] = acc
}

// place puts the entries ps (both ways when all) at next[key], advancing it.
func place[EV any](next []int64, targets []uint32, values []EV, ps []dense, evs []EV, all bool) {
	evs = evs[:len(ps)]
	if all {
		for j, p := range ps {
			i := next[p.s]
			next[p.s] = i + 1
			targets[i], values[i] = p.t, evs[j]
			i = next[p.t]
			next[p.t] = i + 1
			targets[i], values[i] = p.s, evs[j]
		}
		return
	}
	for j, p := range ps {
		i := next[p.s]
		next[p.s] = i + 1
		targets[i], values[i] = p.t, evs[j]
	}
}

// minBucketed is the fewest entries whose reverse is placed by buckets:
// below, the reverse's entries fit the caches anyway. (Tests set it and
// bucketShift.)
var minBucketed int64 = 1 << 20

// bucketShift sets the vertices of a bucket: 1<<bucketShift, whose
// entries (a few per vertex) fit a core's cache while they are placed.
var bucketShift = 13

// reverseBuckets places the reverse adjacency in two passes per worker
// instead of one: its entries are first copied into runs by bucket of
// targets (writes that go to a few hundred places, each in order), then
// each bucket's run is placed, its writes within the bucket's range of
// the reverse. Placing every entry straight at its target's cursor
// writes all over the reverse, a cache miss an entry when it outgrows
// the caches. The copy is stable, so each target's entries keep their
// order.
type reverseBuckets struct {
	counts [][]int64 // per worker: its entries in each bucket
}

// newReverseBuckets counts each worker's entries by bucket from its
// counts by target, rc (before prefix turns them into cursors).
func newReverseBuckets(n int, rc [][]int64) *reverseBuckets {
	nb := (n + 1<<bucketShift - 1) >> bucketShift
	rb := &reverseBuckets{counts: make([][]int64, len(rc))}
	for w, c := range rc {
		bc := make([]int64, nb)
		for v, k := range c[:n] {
			bc[v>>bucketShift] += k
		}
		rb.counts[w] = bc
	}
	return rb
}

// place places worker w's entries, the blocks blocks, at its cursors next.
func (rb *reverseBuckets) place(w int, next []int64, targets []uint32, blocks [][]dense) {
	bc := rb.counts[w]
	cur := make([]int64, len(bc))
	var all int64
	for i, k := range bc {
		cur[i] = all
		all += k
	}
	tmp := make([]dense, all)
	for _, ps := range blocks {
		for _, p := range ps {
			i := p.t >> bucketShift
			tmp[cur[i]] = p
			cur[i]++
		}
	}
	placeReverse(next, targets, tmp)
}

// placeReverse puts the keys of the entries ps at next[target], advancing
// it.
func placeReverse(next []int64, targets []uint32, ps []dense) {
	for _, p := range ps {
		i := next[p.t]
		next[p.t] = i + 1
		targets[i] = p.s
	}
}

// spilled builds the adjacency from the run of dense entries: the vertices
// are cut into ranges whose entries fit half the memory available (at least
// minChunk bytes, and at least one vertex), and one pass over the run per
// range places that range's entries by a counting sort and writes them as
// the range's chunk.
func (b *builder[K, VV, EV]) spilled(n int) (*adjacency[EV], int64, error) {
	if err := b.flushDense(); err != nil {
		return nil, 0, err
	}
	run, err := b.run.Finish()
	b.run = nil
	if err != nil {
		return nil, 0, err
	}
	deg := b.cnt[1:] // deg[v]: vertex v's entries
	per := entryBytes[EV]()
	var all int64
	for _, d := range deg[:n] {
		all += d
	}
	// the blocks are gone: when the whole adjacency fits now, one pass over
	// the run places it in memory, and no superstep reads it back
	if b.res.Grow(all*per+b.after) == nil {
		b.res.Shrink(b.after)
		// the counts become the offsets in place, as in memory: placeRange
		// reads deg[v], cnt[v+1], before it writes offsets[v+1] there
		c := &chunk[EV]{offsets: b.cnt[:0], targets: make([]uint32, 0, all), values: make([]EV, 0, all)}
		b.cnt = nil
		b.res.Force(8 * int64(n)) // the cursors
		err := b.placeRange(run, deg, 0, uint32(n), c, make([]int64, n))
		b.res.Shrink(8 * int64(n))
		if rerr := b.space.Remove(run); err == nil {
			err = rerr
		}
		if err != nil {
			return nil, 0, err
		}
		b.held = true
		return &adjacency[EV]{mem: c}, all, nil
	}
	budget := max(b.res.Manager().Available()/2, minChunk)
	adj := &adjacency[EV]{space: b.space, codec: b.evc, bounds: []uint32{0}}
	var biggest, entries, maxVerts, maxEntries int64
	for lo := 0; lo < n; {
		hi, size := lo+1, deg[lo]*per+8
		for hi < n && size+deg[hi]*per+8 <= budget {
			size += deg[hi]*per + 8
			hi++
		}
		adj.bounds = append(adj.bounds, uint32(hi))
		biggest = max(biggest, size)
		var in int64
		for v := lo; v < hi; v++ {
			in += deg[v]
		}
		entries += in
		maxVerts, maxEntries = max(maxVerts, int64(hi-lo)), max(maxEntries, in)
		lo = hi
	}
	// one chunk as large as the largest range places every range, and then
	// holds the chunk read back for every pass over the edges
	size := maxEntries*per + 16*(maxVerts+1)
	b.res.Force(size)
	c := &chunk[EV]{offsets: make([]int64, 0, maxVerts+1),
		targets: make([]uint32, 0, maxEntries), values: make([]EV, 0, maxEntries)}
	next := make([]int64, maxVerts)
	for i := range len(adj.bounds) - 1 {
		h, err := b.writeRange(run, deg, adj.bounds[i], adj.bounds[i+1], c, next)
		if err != nil {
			b.res.Shrink(size)
			_ = b.space.Remove(run)
			for _, h := range adj.runs {
				_ = b.space.Remove(h)
			}
			return nil, 0, err
		}
		adj.runs = append(adj.runs, h)
	}
	b.res.Shrink(size)
	adj.buf = chunk[EV]{offsets: c.offsets[:0], targets: c.targets[:0], values: c.values[:0]}
	if err := b.space.Remove(run); err != nil {
		return nil, 0, err
	}
	// the one chunk read back at a time, for every pass over the edges
	b.res.Force(biggest)
	return adj, entries, nil
}

// minChunk is the least memory a spilled chunk may take.
const minChunk = 8 << 10

// writeRange places the dense run's entries of the vertices [lo, hi) into c
// (see placeRange) and writes them as a chunk.
func (b *builder[K, VV, EV]) writeRange(dense spill.Handle, deg []int64, lo, hi uint32, c *chunk[EV], next []int64) (spill.Handle, error) {
	if err := b.placeRange(dense, deg, lo, hi, c, next); err != nil {
		return spill.Handle{}, err
	}
	return writeChunk(b.space, b.evc, c)
}

// placeRange places the dense run's entries of the vertices [lo, hi) by a
// counting sort into c (its capacities large enough, next at least hi-lo
// long), in one pass over the run.
func (b *builder[K, VV, EV]) placeRange(dense spill.Handle, deg []int64, lo, hi uint32, c *chunk[EV], next []int64) error {
	evc, zeroEV := b.evc, zeroSize[EV]()
	evFlat := int(unsafe.Sizeof(*new(EV))) // the encoded size of a flat value
	c.lo, c.hi = lo, hi
	c.offsets = c.offsets[:hi-lo+1]
	c.offsets[0] = 0
	for v := lo; v < hi; v++ {
		c.offsets[v-lo+1] = c.offsets[v-lo] + deg[v]
	}
	c.targets, c.values = c.targets[:c.offsets[hi-lo]], c.values[:c.offsets[hi-lo]]
	clear(c.values) // decoded into
	next = next[:hi-lo]
	copy(next, c.offsets)
	r, err := b.space.Open(dense)
	if err != nil {
		return err
	}
	defer r.Close()
	flat := evc.Flat()
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		for len(rec) > 0 { // the block's entries, as put wrote them
			if len(rec) < 8 {
				return errDamagedEntry
			}
			s, t := binary.LittleEndian.Uint32(rec), binary.LittleEndian.Uint32(rec[4:])
			rec = rec[8:]
			val := rec
			switch {
			case zeroEV:
				val = nil
			case flat:
				if len(rec) < evFlat {
					return errDamagedEntry
				}
				val, rec = rec[:evFlat], rec[evFlat:]
			default:
				l, k := binary.Uvarint(rec)
				if k <= 0 || l > uint64(len(rec)-k) {
					return errDamagedEntry
				}
				val, rec = rec[k:k+int(l)], rec[k+int(l):]
			}
			if s < lo || s >= hi {
				continue
			}
			i := next[s-lo]
			next[s-lo]++
			c.targets[i] = t
			if zeroEV {
				continue
			}
			if _, err := evc.Decode(val, &c.values[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// errDamagedEntry is a dense entry cut short in the run.
var errDamagedEntry = errors.New("graph: a damaged entry in the spilled edges")

// appendSized rewrites the value encoded from rec[at] on, after a one-byte
// placeholder, as its length (a uvarint) and the encoding.
func appendSized(rec []byte, at int) []byte {
	n := len(rec) - at - 1
	if n < 0x80 { // the length fits the placeholder
		rec[at] = byte(n)
		return rec
	}
	var lb [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(lb[:], uint64(n))
	rec = append(rec, lb[:k-1]...) // room for the longer length
	copy(rec[at+k:], rec[at+1:at+1+n])
	copy(rec[at:], lb[:k])
	return rec
}
