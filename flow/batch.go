package flow

import (
	"fmt"
	"unsafe"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/spill"
)

// rawBatch is a batch of records with its type erased: the data, length and
// capacity of a []T. The transport (exchange, inbox, store, the channels
// between processes) moves rawBatches, so its code is compiled once, not
// once per record type; only Writer and Reader, which touch records, are
// generic, and they wrap and unwrap their batches at the boundary. The
// pointer keeps the records alive for the garbage collector as the slice
// would. The zero rawBatch is no batch (a message carrying an event).
type rawBatch struct {
	p    unsafe.Pointer
	n, c int
}

func wrap[T any](b []T) rawBatch {
	if b == nil {
		return rawBatch{}
	}
	return rawBatch{unsafe.Pointer(unsafe.SliceData(b)), len(b), cap(b)}
}

func unwrap[T any](b rawBatch) []T {
	if b.p == nil {
		return nil
	}
	return unsafe.Slice((*T)(b.p), b.c)[:b.n]
}

// recordOps are the typed operations the transport needs: making and
// clearing a batch, which only typed code can do for the garbage collector.
// Encoding and decoding go through the edge's codec with its type erased
// (memory.Raw), at the records' addresses, so they too are compiled once.
type recordOps interface {
	// alloc returns an empty batch of capacity n.
	alloc(n int) rawBatch
	// zero clears b's records, dropping what they point to.
	zero(b rawBatch)
}

// ops are the recordOps of records of type T.
type ops[T any] struct{}

func (ops[T]) alloc(n int) rawBatch { return wrap(make([]T, 0, n)) }

func (ops[T]) zero(b rawBatch) { clear(unwrap[T](b)) }

// codec is an edge's codec with its type erased: what the untyped transport
// encodes and decodes batches with.
type codec struct {
	raw  memory.Raw // the zero Raw on a pipelined edge without a codec
	size uintptr    // the records' size in memory
}

// at returns the address of record i of b.
func (c codec) at(b rawBatch, i int) unsafe.Pointer { return unsafe.Add(b.p, uintptr(i)*c.size) }

// flat reports whether the encoding is the records' memory (no pointers),
// or there is no codec.
func (c codec) flat() bool { return !c.raw.Valid() || c.raw.Flat() }

// first appends the encoding of b's first record to dst.
func (c codec) first(dst []byte, b rawBatch) []byte { return c.raw.Append(dst, b.p) }

// encode appends the encoding of every record of b to dst.
func (c codec) encode(dst []byte, b rawBatch) []byte {
	for i := range b.n {
		dst = c.raw.Append(dst, c.at(b, i))
	}
	return dst
}

// decode appends the records of frame (encodings back to back) to b.
func (c codec) decode(b rawBatch, frame []byte) (rawBatch, error) {
	for len(frame) > 0 {
		if b.n == b.c {
			return b, fmt.Errorf("record %d: a frame holds more records than a batch", b.n)
		}
		n, err := c.raw.Decode(frame, c.at(b, b.n), nil)
		if err != nil {
			b.n++ // partly written: recycled and cleared with the batch
			return b, fmt.Errorf("record %d: %w", b.n-1, err)
		}
		b.n++
		frame = frame[n:]
	}
	return b, nil
}

// spill appends every record of b to sw, encoding through scratch.
func (c codec) spill(sw *spill.Writer, b rawBatch, scratch *[]byte) error {
	for i := range b.n {
		*scratch = c.raw.Append((*scratch)[:0], c.at(b, i))
		if err := sw.Append(*scratch); err != nil {
			return err
		}
	}
	return nil
}

// replay appends records of f's open file to b until b holds size (at most
// its capacity) or the file ends (io.EOF, b then holding what was left).
func (c codec) replay(b rawBatch, size int, f *fileReplay, edge string) (rawBatch, error) {
	for b.n < min(size, b.c) {
		rec, err := f.next(edge)
		if err != nil {
			return b, err
		}
		if _, err := c.raw.Decode(rec, c.at(b, b.n), f.arena); err != nil {
			b.n++ // partly written: recycled and cleared with the batch
			return b, f.readErr(edge, err)
		}
		b.n++
	}
	return b, nil
}
