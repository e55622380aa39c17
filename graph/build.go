package graph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
	"unsafe"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/spill"
)

// builder builds an iteration's dense ids and adjacency as its input comes:
// the vertices first, indexed when they end; then the edges a batch at a
// time, each edge's keys translated into dense ids and its entries counted by
// source (in the iteration's direction) on arrival, the dense edges kept in
// fixed blocks while the reservation grants them and written to a spill run
// once it refuses (see spillEdges). finish places them by a counting sort.
type builder[K comparable, VV, EV any] struct {
	res   *memory.Reservation
	space *spill.Space
	dir   Direction
	// reverse asks for the reverse adjacency (targets only) too, when the
	// reservation grants it, for pulling broadcast messages
	reverse bool

	ids    []K
	vals   []VV
	forced int // vertices reserved
	x      *keyIndex[K]

	// cnt[v+1] counts vertex v's adjacency entries (both ends of an edge for
	// All); finish turns it into the offsets in place
	cnt []int64
	// the dense edges in memory, in blocks of blockEdges: (key, target) in
	// the iteration's direction, and their values
	pairs    [][]dense
	evs      [][]EV
	buffered int64    // bytes reserved for the blocks
	sd, td   []uint32 // a batch's dense ids
	ps       []dense  // a batch's kept edges
	ev       []EV

	run *spill.Writer // the dense entries, once spilling
	evc *memory.Codec[EV]
	rec []byte

	took time.Duration // the time spent building, waiting for input excluded
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

// translate writes the dense ids of the batch's sources and destinations to
// b.sd and b.td, sized to the batch (absent for a key that is no vertex).
func (b *builder[K, VV, EV]) translate(es []Edge[K, EV]) {
	if cap(b.sd) < len(es) {
		b.sd, b.td = make([]uint32, len(es)), make([]uint32, len(es))
	}
	sd, td := b.sd[:len(es)], b.td[:len(es)]
	b.sd, b.td = sd, td
	if x := b.x; x.table != nil {
		// int64 keys through the table, without a conversion per key
		ks := any(es).([]Edge[int64, EV])
		base, t := x.base, x.table
		for i := range ks {
			s, d := uint64(ks[i].Src-base), uint64(ks[i].Dst-base)
			sd[i], td[i] = absent, absent
			if s < uint64(len(t)) {
				sd[i] = t[s] - 1
			}
			if d < uint64(len(t)) {
				td[i] = t[d] - 1
			}
		}
		return
	}
	for i := range es {
		sd[i], td[i] = b.x.lookup(es[i].Src), b.x.lookup(es[i].Dst)
	}
}

// addEdges takes a batch of edges: it counts their entries and keeps them
// as dense ids, in a block or in the spill run.
func (b *builder[K, VV, EV]) addEdges(es []Edge[K, EV]) error {
	start := time.Now()
	defer func() { b.took += time.Since(start) }()
	b.translate(es)
	keys, tgts := b.sd, b.td
	if b.dir == In {
		keys, tgts = tgts, keys
	}
	if cap(b.ps) < len(es) {
		b.ps, b.ev = make([]dense, len(es)), make([]EV, len(es))
	}
	ps, evs := b.ps[:len(es)], b.ev[:len(es)]
	cnt, all, k := b.cnt, b.dir == All, 0
	for i := range es {
		s, t := keys[i], tgts[i]
		if s == absent || t == absent {
			continue
		}
		cnt[s+1]++
		if all {
			cnt[t+1]++
		}
		ps[k], evs[k] = dense{s, t}, es[i].Value
		k++
	}
	return b.keep(ps[:k], evs[:k])
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
	b.pairs, b.evs = nil, nil
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

func (b *builder[K, VV, EV]) put(s, t uint32, ev *EV) error {
	b.rec = binary.LittleEndian.AppendUint32(b.rec[:0], s)
	b.rec = binary.LittleEndian.AppendUint32(b.rec, t)
	b.rec = b.evc.Append(b.rec, ev)
	return b.run.Append(b.rec)
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
		entries := int64(0)
		for _, c := range b.cnt {
			entries += c
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

// inMemory places the blocks' entries by a counting sort by key over the
// counts taken as the edges came, and the reverse adjacency when asked for
// and granted.
func (b *builder[K, VV, EV]) inMemory(n int, entries int64) (*adjacency[EV], *chunk[EV], int64) {
	offsets := b.cnt
	b.cnt = nil
	for v := range n {
		offsets[v+1] += offsets[v]
	}
	targets := make([]uint32, entries)
	values := make([]EV, entries)
	all := b.dir == All
	for i, ps := range b.pairs {
		place(offsets, targets, values, ps, b.evs[i], all)
	}
	unshift(offsets)
	c := &chunk[EV]{lo: 0, hi: uint32(n), offsets: offsets, targets: targets, values: values}
	var rev *chunk[EV]
	switch {
	case !b.reverse:
	case all:
		rev = c // its own reverse
	case b.res.Grow(4*entries+8*int64(n+1)) == nil:
		rev = reverseOf[EV](b.pairs, n, entries)
	}
	b.pairs, b.evs = nil, nil
	return &adjacency[EV]{mem: c}, rev, entries
}

// place puts the entries ps (both ways when all) at next[key], advancing it.
func place[EV any](next []int64, targets []uint32, values []EV, ps []dense, evs []EV, all bool) {
	evs = evs[:len(ps)]
	for j, p := range ps {
		i := next[p.s]
		next[p.s] = i + 1
		targets[i], values[i] = p.t, evs[j]
		if all {
			i := next[p.t]
			next[p.t] = i + 1
			targets[i], values[i] = p.s, evs[j]
		}
	}
}

// unshift turns offsets advanced by place (offsets[v] at the end of v's
// entries, the start of v+1's) back into the starts.
func unshift(offsets []int64) {
	for v := len(offsets) - 2; v >= 1; v-- {
		offsets[v] = offsets[v-1]
	}
	offsets[0] = 0
}

// reverseOf returns the adjacency of the dense edges by target, without
// values.
func reverseOf[EV any](pairs [][]dense, n int, entries int64) *chunk[EV] {
	offsets := make([]int64, n+1)
	for _, ps := range pairs {
		for _, p := range ps {
			offsets[p.t+1]++
		}
	}
	for v := range n {
		offsets[v+1] += offsets[v]
	}
	targets := make([]uint32, entries)
	for _, ps := range pairs {
		for _, p := range ps {
			i := offsets[p.t]
			offsets[p.t] = i + 1
			targets[i] = p.s
		}
	}
	unshift(offsets)
	return &chunk[EV]{lo: 0, hi: uint32(n), offsets: offsets, targets: targets}
}

// spilled builds the adjacency from the run of dense entries: the vertices
// are cut into ranges whose entries fit half the memory available (at least
// minChunk bytes, and at least one vertex), and one pass over the run per
// range places that range's entries by a counting sort and writes them as
// the range's chunk.
func (b *builder[K, VV, EV]) spilled(n int) (*adjacency[EV], int64, error) {
	run, err := b.run.Finish()
	b.run = nil
	if err != nil {
		return nil, 0, err
	}
	deg := b.cnt[1:] // deg[v]: vertex v's entries
	per := entryBytes[EV]()
	budget := max(b.res.Manager().Available()/2, minChunk)
	adj := &adjacency[EV]{space: b.space, codec: b.evc, bounds: []uint32{0}}
	var biggest, entries int64
	for lo := 0; lo < n; {
		hi, size := lo+1, deg[lo]*per+8
		for hi < n && size+deg[hi]*per+8 <= budget {
			size += deg[hi]*per + 8
			hi++
		}
		h, err := b.writeRange(run, deg, uint32(lo), uint32(hi))
		if err != nil {
			_ = b.space.Remove(run)
			return nil, 0, err
		}
		adj.runs = append(adj.runs, h)
		adj.bounds = append(adj.bounds, uint32(hi))
		biggest = max(biggest, size)
		for v := lo; v < hi; v++ {
			entries += deg[v]
		}
		lo = hi
	}
	if n == 0 {
		adj.bounds = adj.bounds[:1]
	}
	if err := b.space.Remove(run); err != nil {
		return nil, 0, err
	}
	// the one chunk read back at a time, for every pass over the edges
	b.res.Force(biggest)
	return adj, entries, nil
}

// minChunk is the least memory a spilled chunk may take.
const minChunk = 8 << 10

// writeRange places the dense run's entries of the vertices [lo, hi) by a
// counting sort and writes them as a chunk.
func (b *builder[K, VV, EV]) writeRange(dense spill.Handle, deg []int64, lo, hi uint32) (spill.Handle, error) {
	evc := b.evc
	c := &chunk[EV]{lo: lo, hi: hi, offsets: make([]int64, hi-lo+1)}
	for v := lo; v < hi; v++ {
		c.offsets[v-lo+1] = c.offsets[v-lo] + deg[v]
	}
	size := c.offsets[hi-lo]*entryBytes[EV]() + 16*int64(hi-lo+1)
	b.res.Force(size)
	defer b.res.Shrink(size)
	c.targets = make([]uint32, c.offsets[hi-lo])
	c.values = make([]EV, c.offsets[hi-lo])
	next := make([]int64, hi-lo)
	copy(next, c.offsets)
	r, err := b.space.Open(dense)
	if err != nil {
		return spill.Handle{}, err
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return spill.Handle{}, err
		}
		s := binary.LittleEndian.Uint32(rec)
		if s < lo || s >= hi {
			continue
		}
		i := next[s-lo]
		next[s-lo]++
		c.targets[i] = binary.LittleEndian.Uint32(rec[4:])
		if _, err := evc.Decode(rec[8:], &c.values[i]); err != nil {
			return spill.Handle{}, err
		}
	}
	return writeChunk(b.space, evc, c)
}
