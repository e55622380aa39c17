package graph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"unsafe"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/spill"
)

// chunk is the compressed adjacency (CSR) of the vertices [lo, hi): the
// neighbours of vertex v are targets[offsets[v-lo]:offsets[v-lo+1]] and the
// edges' values the same range of values.
type chunk[EV any] struct {
	lo, hi  uint32
	offsets []int64
	targets []uint32
	values  []EV
	// lazy, when set, places targets on the first call of tgts: the build
	// leaves them out when the edges carry no values and the reverse
	// adjacency holds them too
	lazy *lazyTargets
}

// lazyTargets runs fill once.
type lazyTargets struct {
	once sync.Once
	fill func()
}

// tgts returns the chunk's targets, placing them first if they were left
// for when needed. It may be called by several workers at once.
func (c *chunk[EV]) tgts() []uint32 {
	if c.lazy != nil {
		c.lazy.once.Do(c.lazy.fill)
	}
	return c.targets
}

// entryBytes is what one adjacency entry holds: its target and its value.
func entryBytes[EV any]() int64 {
	var ev EV
	return 4 + int64(unsafe.Sizeof(ev))
}

// adjacency is the graph's edges in the iteration's direction: one chunk in
// memory, or chunks of vertex ranges in spill runs, read back one at a time
// into buf for every pass over the edges.
type adjacency[EV any] struct {
	mem    *chunk[EV]
	runs   []spill.Handle
	bounds []uint32 // chunk i holds [bounds[i], bounds[i+1])
	space  *spill.Space
	codec  *memory.Codec[EV]
	// buf holds the chunk read back: made as large as the largest chunk
	// by the build, so that reading the chunks back leaves no garbage
	buf chunk[EV]
}

// chunks returns the number of chunks.
func (a *adjacency[EV]) chunks() int {
	if a.mem != nil {
		return 1
	}
	return len(a.runs)
}

// chunk returns chunk i, reading it back from its run when spilled; the
// returned chunk is valid until the next call.
func (a *adjacency[EV]) chunk(i int) (*chunk[EV], error) {
	if a.mem != nil {
		return a.mem, nil
	}
	r, err := a.space.Open(a.runs[i])
	if err != nil {
		return nil, err
	}
	defer r.Close()
	c := &a.buf
	c.lo, c.hi = a.bounds[i], a.bounds[i+1]
	c.offsets = append(c.offsets[:0], 0)
	c.targets, c.values = c.targets[:0], c.values[:0]
	for v := c.lo; v < c.hi; v++ {
		rec, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("chunk %d, vertex %d: %w", i, v, err)
		}
		deg, k := binary.Uvarint(rec)
		if k <= 0 || uint64(len(rec)-k) < 4*deg {
			return nil, fmt.Errorf("chunk %d, vertex %d: a damaged record", i, v)
		}
		rec = rec[k:]
		for j := range int(deg) {
			c.targets = append(c.targets, binary.LittleEndian.Uint32(rec[4*j:]))
		}
		rec = rec[4*deg:]
		if zeroSize[EV]() { // no bytes to decode: grow the values in one step
			n := len(c.values) + int(deg)
			c.values = slices.Grow(c.values, int(deg))[:n]
			c.offsets = append(c.offsets, int64(len(c.targets)))
			continue
		}
		for range deg {
			var ev EV
			n, err := a.codec.Decode(rec, &ev)
			if err != nil {
				return nil, fmt.Errorf("chunk %d, vertex %d: %w", i, v, err)
			}
			rec = rec[n:]
			c.values = append(c.values, ev)
		}
		c.offsets = append(c.offsets, int64(len(c.targets)))
	}
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("chunk %d: records past its last vertex (%v)", i, err)
	}
	return c, nil
}

// writeChunk writes c as a run, one record per vertex: its degree, its
// targets and its edges' values.
func writeChunk[EV any](space *spill.Space, codec *memory.Codec[EV], c *chunk[EV]) (spill.Handle, error) {
	w, err := space.Create()
	if err != nil {
		return spill.Handle{}, err
	}
	var rec []byte
	for v := c.lo; v < c.hi; v++ {
		a, b := c.offsets[v-c.lo], c.offsets[v-c.lo+1]
		rec = binary.AppendUvarint(rec[:0], uint64(b-a))
		for _, t := range c.targets[a:b] {
			rec = binary.LittleEndian.AppendUint32(rec, t)
		}
		for j := a; j < b; j++ {
			rec = codec.Append(rec, &c.values[j])
		}
		if err := w.Append(rec); err != nil {
			w.Abort()
			return spill.Handle{}, err
		}
	}
	return w.Finish()
}

// zeroSize reports whether values of type T take no memory (struct{}, the
// edge value of an unweighted graph): their codec writes and reads nothing.
func zeroSize[T any]() bool {
	var v T
	return unsafe.Sizeof(v) == 0
}
