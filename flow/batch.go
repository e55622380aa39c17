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

// recordOps are the typed operations the transport needs, each over a whole
// batch: one small set of functions per record type instead of the whole
// transport.
type recordOps interface {
	// alloc returns an empty batch of capacity n.
	alloc(n int) rawBatch
	// zero clears b's records, dropping what they point to.
	zero(b rawBatch)
	// flat reports whether the codec's encoding is the records' memory
	// (no pointers), or there is no codec.
	flat() bool
	// first appends the encoding of b's first record to dst.
	first(dst []byte, b rawBatch) []byte
	// encode appends the encoding of every record of b to dst.
	encode(dst []byte, b rawBatch) []byte
	// decode appends the records of frame (encodings back to back) to b.
	decode(b rawBatch, frame []byte) (rawBatch, error)
	// spill appends every record of b to sw, encoding through scratch.
	spill(sw *spill.Writer, b rawBatch, scratch *[]byte) error
	// replay appends records of f's open file to b until b holds size or
	// the file ends (io.EOF, b then holding what was left).
	replay(b rawBatch, size int, f *fileReplay, edge string) (rawBatch, error)
}

// ops are the recordOps of records of type T with codec (nil on a pipelined
// edge within one process).
type ops[T any] struct{ codec *memory.Codec[T] }

func (o ops[T]) alloc(n int) rawBatch { return wrap(make([]T, 0, n)) }

func (o ops[T]) zero(b rawBatch) { clear(unwrap[T](b)) }

func (o ops[T]) flat() bool { return o.codec == nil || o.codec.Flat() }

func (o ops[T]) first(dst []byte, b rawBatch) []byte {
	return o.codec.Append(dst, &unwrap[T](b)[0])
}

func (o ops[T]) encode(dst []byte, b rawBatch) []byte {
	recs := unwrap[T](b)
	for i := range recs {
		dst = o.codec.Append(dst, &recs[i])
	}
	return dst
}

func (o ops[T]) decode(b rawBatch, frame []byte) (rawBatch, error) {
	recs := unwrap[T](b)
	for len(frame) > 0 {
		var v T
		n, err := o.codec.Decode(frame, &v)
		if err != nil {
			return wrap(recs), fmt.Errorf("record %d: %w", len(recs), err)
		}
		recs = append(recs, v)
		frame = frame[n:]
	}
	return wrap(recs), nil
}

func (o ops[T]) spill(sw *spill.Writer, b rawBatch, scratch *[]byte) error {
	recs := unwrap[T](b)
	for i := range recs {
		*scratch = o.codec.Append((*scratch)[:0], &recs[i])
		if err := sw.Append(*scratch); err != nil {
			return err
		}
	}
	return nil
}

func (o ops[T]) replay(b rawBatch, size int, f *fileReplay, edge string) (rawBatch, error) {
	recs := unwrap[T](b)
	for len(recs) < size {
		rec, err := f.next(edge)
		if err != nil {
			return wrap(recs), err
		}
		var zero T
		recs = append(recs, zero)
		if _, err := o.codec.DecodeArena(rec, &recs[len(recs)-1], f.arena); err != nil {
			return wrap(recs), f.readErr(edge, err)
		}
	}
	return wrap(recs), nil
}
