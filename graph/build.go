package graph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unsafe"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/spill"
)

// item is a vertex or an edge on its way into an iteration's task.
type item[K comparable, VV, EV any] struct {
	v    Vertex[K, VV]
	e    Edge[K, EV]
	edge bool
}

// builder takes an iteration's input and builds its dense ids and adjacency.
// Edges are buffered as they come while the reservation grants their bytes;
// when it refuses, they go to a spill run instead (see spillEdges).
type builder[K comparable, VV, EV any] struct {
	res   *memory.Reservation
	space *spill.Space
	dir   Direction
	// reverse asks for the reverse adjacency (targets only) too, when the
	// reservation grants it, for pulling broadcast messages
	reverse bool

	ids  []K
	vals []VV

	src, dst []K
	evs      []EV
	buffered int64 // bytes reserved for the buffered edges

	run   *spill.Writer // the edges by key, once spilling
	codec *memory.Codec[Edge[K, EV]]
	rec   []byte
}

const grant = 4096 // vertices or edges reserved at a time

func (b *builder[K, VV, EV]) vertexBytes() int64 {
	var k K
	var vv VV
	return int64(unsafe.Sizeof(k)) + int64(unsafe.Sizeof(vv))
}

func (b *builder[K, VV, EV]) edgeBytes() int64 {
	var k K
	var ev EV
	return 2*int64(unsafe.Sizeof(k)) + int64(unsafe.Sizeof(ev))
}

// add takes one input record.
func (b *builder[K, VV, EV]) add(it *item[K, VV, EV]) error {
	if !it.edge {
		if len(b.ids)%grant == 0 {
			// vertex-sized state is the minimum an iteration needs: forced
			b.res.Force(grant * b.vertexBytes())
		}
		b.ids = append(b.ids, it.v.ID)
		b.vals = append(b.vals, it.v.Value)
		return nil
	}
	if b.run != nil {
		return b.write(&it.e)
	}
	if len(b.src)%grant == 0 {
		if err := b.res.Grow(grant * b.edgeBytes()); err != nil {
			if err := b.spillEdges(); err != nil {
				return err
			}
			return b.write(&it.e)
		}
		b.buffered += grant * b.edgeBytes()
	}
	b.src = append(b.src, it.e.Src)
	b.dst = append(b.dst, it.e.Dst)
	b.evs = append(b.evs, it.e.Value)
	return nil
}

// spillEdges starts the spill run of edges by key, writes the buffered edges
// to it and frees their buffer.
func (b *builder[K, VV, EV]) spillEdges() error {
	c, err := memory.NewCodec[Edge[K, EV]]()
	if err != nil {
		return fmt.Errorf("the edges outgrow the budget and cannot be spilled: %w", err)
	}
	b.codec = c
	if b.run, err = b.space.Create(); err != nil {
		return err
	}
	for i := range b.src {
		if err := b.write(&Edge[K, EV]{Src: b.src[i], Dst: b.dst[i], Value: b.evs[i]}); err != nil {
			return err
		}
	}
	b.src, b.dst, b.evs = nil, nil, nil
	b.res.Shrink(b.buffered)
	b.buffered = 0
	return nil
}

func (b *builder[K, VV, EV]) write(e *Edge[K, EV]) error {
	b.rec = b.codec.Append(b.rec[:0], e)
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

// finish indexes the vertices and builds the adjacency: in memory by a
// counting sort when the reservation grants it, else in spilled chunks.
func (b *builder[K, VV, EV]) finish() (*graphData[K, VV, EV], error) {
	x, ids, vals := newKeyIndex(b.ids, b.vals)
	b.res.Force(x.bytes())
	g := &graphData[K, VV, EV]{ids: ids, values: vals, index: x}
	n := int64(len(ids))
	if n >= int64(absent) {
		return nil, fmt.Errorf("%d vertices: at most %d", n, absent-1)
	}
	if b.run == nil {
		e := int64(len(b.src))
		entries := e
		if b.dir == All {
			entries = 2 * e
		}
		need := 8*e + 16*(n+1) + entries*entryBytes[EV]()
		if err := b.res.Grow(need); err == nil {
			g.adj, g.rev, g.entries = b.inMemory(x, int(n), entries)
			// the key buffers are gone; the dense edges (8E) and next (8n) too
			b.res.Shrink(b.buffered + 8*e + 8*(n+1))
			b.buffered = 0
			return g, nil
		}
		if err := b.spillEdges(); err != nil {
			return nil, err
		}
	}
	adj, entries, err := b.spilled(x, int(n))
	if err != nil {
		return nil, err
	}
	g.adj, g.entries = adj, entries
	return g, nil
}

// inMemory builds the adjacency of the buffered edges by a counting sort by
// source (by destination for In, by both for All).
func (b *builder[K, VV, EV]) inMemory(x *keyIndex[K], n int, entries int64) (*adjacency[EV], *chunk[EV], int64) {
	ds, dd := make([]uint32, len(b.src)), make([]uint32, len(b.dst))
	x.translate(b.src, ds)
	x.translate(b.dst, dd)
	evs := b.evs
	b.src, b.dst, b.evs = nil, nil, nil
	keys, tgts := ds, dd
	if b.dir == In {
		keys, tgts = dd, ds
	}
	offsets := make([]int64, n+1)
	for i, s := range keys {
		t := tgts[i]
		if s == absent || t == absent {
			continue
		}
		offsets[s+1]++
		if b.dir == All {
			offsets[t+1]++
		}
	}
	for v := range n {
		offsets[v+1] += offsets[v]
	}
	next := make([]int64, n)
	copy(next, offsets[:n])
	targets := make([]uint32, offsets[n])
	values := make([]EV, offsets[n])
	for i, s := range keys {
		t := tgts[i]
		if s == absent || t == absent {
			continue
		}
		targets[next[s]], values[next[s]] = t, evs[i]
		next[s]++
		if b.dir == All {
			targets[next[t]], values[next[t]] = s, evs[i]
			next[t]++
		}
	}
	c := &chunk[EV]{lo: 0, hi: uint32(n), offsets: offsets, targets: targets, values: values}
	var rev *chunk[EV]
	switch {
	case !b.reverse:
	case b.dir == All:
		rev = c // its own reverse
	case b.res.Grow(4*offsets[n]+16*int64(n+1)) == nil:
		rev = reverseOf[EV](tgts, keys, n, offsets[n])
	}
	return &adjacency[EV]{mem: c}, rev, offsets[n]
}

// reverseOf returns the adjacency of the edges keys[i] -> tgts[i] (those
// with both ends) by a counting sort by key, without values.
func reverseOf[EV any](keys, tgts []uint32, n int, entries int64) *chunk[EV] {
	offsets := make([]int64, n+1)
	for i, s := range keys {
		if s != absent && tgts[i] != absent {
			offsets[s+1]++
		}
	}
	for v := range n {
		offsets[v+1] += offsets[v]
	}
	next := make([]int64, n)
	copy(next, offsets[:n])
	targets := make([]uint32, entries)
	for i, s := range keys {
		if t := tgts[i]; s != absent && t != absent {
			targets[next[s]] = t
			next[s]++
		}
	}
	return &chunk[EV]{lo: 0, hi: uint32(n), offsets: offsets, targets: targets}
}

// spilled builds the adjacency from the run of edges by key: one pass
// translates the keys into dense ids, counts every vertex's entries and
// writes the dense edges to a second run; then the vertices are cut into
// ranges whose entries fit half the memory available (at least minChunk
// bytes, and at least one vertex), and one pass over the dense run per range
// places that range's entries by a counting sort and writes them as the
// range's chunk.
func (b *builder[K, VV, EV]) spilled(x *keyIndex[K], n int) (*adjacency[EV], int64, error) {
	keyed, err := b.run.Finish()
	b.run = nil
	if err != nil {
		return nil, 0, err
	}
	evc, err := memory.NewCodec[EV]()
	if err != nil {
		return nil, 0, err
	}
	deg := make([]int64, n+1)
	b.res.Force(8 * int64(n+1))
	dense, err := b.denseRun(keyed, x, evc, deg)
	if rerr := b.space.Remove(keyed); err == nil {
		err = rerr
	}
	if err != nil {
		return nil, 0, err
	}
	per := entryBytes[EV]()
	budget := max(b.res.Manager().Available()/2, minChunk)
	adj := &adjacency[EV]{space: b.space, codec: evc, bounds: []uint32{0}}
	var biggest, entries int64
	for lo := 0; lo < n; {
		hi, size := lo+1, deg[lo]*per+8
		for hi < n && size+deg[hi]*per+8 <= budget {
			size += deg[hi]*per + 8
			hi++
		}
		h, err := b.writeRange(dense, evc, deg, uint32(lo), uint32(hi))
		if err != nil {
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
	if err := b.space.Remove(dense); err != nil {
		return nil, 0, err
	}
	// the one chunk read back at a time, for every pass over the edges
	b.res.Force(biggest)
	return adj, entries, nil
}

// minChunk is the least memory a spilled chunk may take.
const minChunk = 8 << 10

// denseRun reads the edges by key, counts every vertex's entries into deg and
// writes the edges whose ends are both vertices to a run as dense ids (the
// entry's key, its target) and value, both ways for All.
func (b *builder[K, VV, EV]) denseRun(keyed spill.Handle, x *keyIndex[K], evc *memory.Codec[EV], deg []int64) (spill.Handle, error) {
	r, err := b.space.Open(keyed)
	if err != nil {
		return spill.Handle{}, err
	}
	defer r.Close()
	w, err := b.space.Create()
	if err != nil {
		return spill.Handle{}, err
	}
	put := func(s, t uint32, ev *EV) error {
		deg[s]++
		b.rec = binary.LittleEndian.AppendUint32(b.rec[:0], s)
		b.rec = binary.LittleEndian.AppendUint32(b.rec, t)
		b.rec = evc.Append(b.rec, ev)
		return w.Append(b.rec)
	}
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			w.Abort()
			return spill.Handle{}, err
		}
		var e Edge[K, EV]
		if _, err := b.codec.Decode(rec, &e); err != nil {
			w.Abort()
			return spill.Handle{}, err
		}
		s, t := x.lookup(e.Src), x.lookup(e.Dst)
		if s == absent || t == absent {
			continue
		}
		if b.dir == In {
			s, t = t, s
		}
		err = put(s, t, &e.Value)
		if err == nil && b.dir == All {
			err = put(t, s, &e.Value)
		}
		if err != nil {
			w.Abort()
			return spill.Handle{}, err
		}
	}
	return w.Finish()
}

// writeRange places the dense run's entries of the vertices [lo, hi) by a
// counting sort and writes them as a chunk.
func (b *builder[K, VV, EV]) writeRange(dense spill.Handle, evc *memory.Codec[EV], deg []int64, lo, hi uint32) (spill.Handle, error) {
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
