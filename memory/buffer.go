package memory

import (
	"encoding/binary"
	"fmt"
)

// RecordBuffer is an append-only sequence of (key, value) records serialized into
// segments drawn from one Reservation. It is the storage under the sort buffer, the
// hash-join build side and the hash-aggregation table.
//
// Layout of one record: uvarint(len(key)) uvarint(len(val)) key val. A record that
// fits in a segment never straddles two: when the current segment has too little room
// left, the record starts the next one. A record larger than a segment starts a fresh
// segment and continues over as many following segments as it needs; reading it copies
// it into the caller's scratch slice.
//
// An offset names a record: the segment index in the high 32 bits, the position in
// the low 32. Offsets stay valid until Reset or Free.
type RecordBuffer struct {
	res     *Reservation
	segSize int
	segs    [][]byte
	cur     int   // write position in segs[len(segs)-1]
	n       int   // records
	bytes   int64 // serialized bytes appended, headers included
	// spare segments kept by Reset for reuse
	spare [][]byte
}

// NewRecordBuffer returns an empty buffer drawing segments from res.
func NewRecordBuffer(res *Reservation) *RecordBuffer {
	return &RecordBuffer{res: res, segSize: res.m.segSize}
}

// Len returns the number of records.
func (b *RecordBuffer) Len() int { return b.n }

// Bytes returns the serialized bytes appended, record headers included.
func (b *RecordBuffer) Bytes() int64 { return b.bytes }

// Segments returns the number of segments in use.
func (b *RecordBuffer) Segments() int { return len(b.segs) }

// RecordSize returns the number of bytes a record of the given key and value
// lengths takes in the buffer.
func RecordSize(keyLen, valLen int) int {
	return uvarintLen(uint64(keyLen)) + uvarintLen(uint64(valLen)) + keyLen + valLen
}

// Fits reports whether a record of the given size can be appended without a new
// segment.
func (b *RecordBuffer) Fits(size int) bool {
	return len(b.segs) > 0 && b.cur+size <= b.segSize
}

// Append adds a record and returns its offset. When the record needs a new segment
// and the reservation cannot supply one, Append returns ErrBudgetExceeded and leaves
// the buffer unchanged: the caller spills and retries.
func (b *RecordBuffer) Append(key, val []byte) (uint64, error) {
	return b.append(key, val, false)
}

// AppendForce is Append that takes segments past the budget if it must. Operators use
// it for the one record they need in memory to make progress (see Reservation.Force).
func (b *RecordBuffer) AppendForce(key, val []byte) uint64 {
	off, _ := b.append(key, val, true)
	return off
}

func (b *RecordBuffer) newSegment(force bool) error {
	var s []byte
	if k := len(b.spare); k > 0 {
		s = b.spare[k-1]
		b.spare = b.spare[:k-1]
	} else if force {
		s = b.res.ForceSegment()
	} else {
		var err error
		if s, err = b.res.Segment(); err != nil {
			return err
		}
	}
	b.segs = append(b.segs, s)
	b.cur = 0
	return nil
}

func (b *RecordBuffer) append(key, val []byte, force bool) (uint64, error) {
	size := RecordSize(len(key), len(val))
	if size <= b.segSize {
		if len(b.segs) == 0 || b.cur+size > b.segSize {
			if err := b.newSegment(force); err != nil {
				return 0, err
			}
		}
		si := len(b.segs) - 1
		seg := b.segs[si][b.cur:]
		p := binary.PutUvarint(seg, uint64(len(key)))
		p += binary.PutUvarint(seg[p:], uint64(len(val)))
		p += copy(seg[p:], key)
		copy(seg[p:], val)
		off := uint64(si)<<32 | uint64(b.cur)
		b.cur += size
		b.n++
		b.bytes += int64(size)
		return off, nil
	}
	// A record larger than a segment: take every segment it needs first, so that a
	// failure leaves the buffer unchanged.
	need := (size + b.segSize - 1) / b.segSize
	start, cur := len(b.segs), b.cur
	for i := 0; i < need; i++ {
		if err := b.newSegment(force); err != nil {
			// give back what this call took, so a failed append does not starve others
			for j := len(b.segs) - 1; j >= start; j-- {
				b.res.FreeSegment(b.segs[j])
				b.segs[j] = nil
			}
			b.segs = b.segs[:start]
			b.cur = cur
			return 0, err
		}
	}
	var hdr [2 * binary.MaxVarintLen64]byte
	h := binary.PutUvarint(hdr[:], uint64(len(key)))
	h += binary.PutUvarint(hdr[h:], uint64(len(val)))
	w := spanWriter{segs: b.segs[start:]}
	w.write(hdr[:h])
	w.write(key)
	w.write(val)
	b.cur = b.segSize // the last segment of a large record takes no more records
	b.n++
	b.bytes += int64(size)
	return uint64(start) << 32, nil
}

type spanWriter struct {
	segs [][]byte
	i, p int
}

func (w *spanWriter) write(src []byte) {
	for len(src) > 0 {
		n := copy(w.segs[w.i][w.p:], src)
		src = src[n:]
		w.p += n
		if w.p == len(w.segs[w.i]) {
			w.i++
			w.p = 0
		}
	}
}

// Get returns the record at off. When the record lies in one segment, key and val
// alias the buffer's memory (and may be written in place, keeping their length);
// otherwise the record is copied into scratch, grown as needed, which Get returns
// for reuse.
func (b *RecordBuffer) Get(off uint64, scratch []byte) (key, val, scratchOut []byte) {
	si, pos := int(off>>32), int(uint32(off))
	seg := b.segs[si]
	kl, n1 := binary.Uvarint(seg[pos:])
	vl, n2 := binary.Uvarint(seg[pos+n1:])
	h := n1 + n2
	total := h + int(kl) + int(vl)
	if pos+total <= b.segSize {
		k := seg[pos+h : pos+h+int(kl) : pos+h+int(kl)]
		v := seg[pos+h+int(kl) : pos+total : pos+total]
		return k, v, scratch
	}
	body := int(kl) + int(vl)
	if cap(scratch) < body {
		scratch = make([]byte, body)
	}
	scratch = scratch[:body]
	// skip the header, then copy the body across segments
	i, p := si, pos+h
	for w := 0; w < body; {
		if p == b.segSize {
			i++
			p = 0
		}
		n := copy(scratch[w:], b.segs[i][p:])
		w += n
		p += n
	}
	return scratch[:kl:kl], scratch[kl:body:body], scratch
}

// Touch reads a byte of each cache line of the first 128 bytes at off (when
// the segment goes on that far), all of a record of up to 128 bytes, and
// returns their sum, which the caller keeps so that the reads are not
// optimized away. Touching the records
// a loop will Get an iteration later lets their cache misses overlap with its
// work instead of stalling it one record at a time. (Touching every cache line
// of a record, after reading its length, measured slower: the header's miss
// then stalls the touching.)
func (b *RecordBuffer) Touch(off uint64) byte {
	seg := b.segs[int(off>>32)]
	pos := int(uint32(off))
	t := seg[pos]
	if pos+127 < len(seg) {
		t += seg[pos+64] + seg[pos+127]
	}
	return t
}

// Key returns the key of the record at off; see Get for aliasing.
func (b *RecordBuffer) Key(off uint64, scratch []byte) (key, scratchOut []byte) {
	k, _, s := b.Get(off, scratch)
	return k, s
}

// Reset empties the buffer and keeps its segments for reuse.
func (b *RecordBuffer) Reset() {
	for i := len(b.segs) - 1; i >= 0; i-- {
		b.spare = append(b.spare, b.segs[i])
		b.segs[i] = nil
	}
	b.segs = b.segs[:0]
	b.cur, b.n, b.bytes = 0, 0, 0
}

// Free empties the buffer and returns all its segments to the reservation.
func (b *RecordBuffer) Free() {
	b.Reset()
	for i, s := range b.spare {
		b.res.FreeSegment(s)
		b.spare[i] = nil
	}
	b.spare = b.spare[:0]
}

// FreeSpare returns the segments kept by Reset but not in use to the reservation.
func (b *RecordBuffer) FreeSpare() {
	for i, s := range b.spare {
		b.res.FreeSegment(s)
		b.spare[i] = nil
	}
	b.spare = b.spare[:0]
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// AppendKV appends the self-delimiting form of a (key, value) pair to dst:
// uvarint(len(key)) key val. Spill files and exchanges carry pairs in this form.
func AppendKV(dst, key, val []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	dst = append(dst, key...)
	return append(dst, val...)
}

// SplitKV splits the output of AppendKV back into key and value, which alias b.
func SplitKV(b []byte) (key, val []byte, err error) {
	kl, n := binary.Uvarint(b)
	if n <= 0 || uint64(len(b)-n) < kl {
		return nil, nil, fmt.Errorf("memory: corrupt key/value pair of %d bytes", len(b))
	}
	return b[n : n+int(kl) : n+int(kl)], b[n+int(kl):], nil
}
