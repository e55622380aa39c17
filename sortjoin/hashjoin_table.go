package sortjoin

import (
	"bytes"
	"math"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/spill"
)

// joinMaxPartRecords bounds the records of one in-memory partition: slots hold a
// 32-bit record number.
const joinMaxPartRecords = math.MaxUint32 - 1

// joinPartState is the state of one hash-join partition.
type joinPartState uint8

const (
	// joinPartMemory: build records are in the partition's RecordBuffer; after the build
	// phase the hash table is built over them and probed.
	joinPartMemory joinPartState = iota
	// joinPartSpilled: build records (and later probe records) go to spill files and the
	// pair is joined at the next level.
	joinPartSpilled
)

// joinPart is one hash partition of one level of a hash join.
//
// In memory it owns a RecordBuffer (its own segments, so that spilling it frees
// exactly its memory), the offsets of its records (grown by half, accounted by
// capacity), and after the build phase an open-addressing table over them:
//
//	slots []uint64: 0 = empty, else hash>>32 (tag) << 32 | record number + 1,
//	                one slot per distinct key, linear probing, load ≤ 3/4
//	next  []uint32: chain of the records with the slot's key (record number + 1, 0 ends)
//	bits  []uint64: matched flag per chain head (build-side outer, semi and anti joins)
//
// A chain holds records of one key only (inserts compare full keys), so a probe
// compares the key once per chain, not once per record.
//
// The table's bytes are reserved while the build records arrive (tableRes covers
// joinTableBytes(reserved records)), so building it after the build phase cannot fail.
type joinPart struct {
	state joinPartState
	n     int // build records in memory (joinPartMemory)

	buf      *memory.RecordBuffer
	offs     []uint64
	tableRes int64 // plain bytes reserved for offs (its capacity) and the table
	planned  int   // records the table reservation covers

	slots []uint64
	next  []uint32
	bits  []uint64
	mask  uint64

	// Over all build records of the partition, in memory or spilled:
	records   int64
	firstHash uint64
	oneHash   bool // every record so far has firstHash

	bw       *spill.Writer // build file being written (joinPartSpilled)
	bh       spill.Handle
	hasBuild bool
	pw       *spill.Writer // probe file being written (joinPartSpilled)
	ph       spill.Handle
	hasProbe bool
}

// note records that a build record with hash h joined the partition.
func (p *joinPart) note(h uint64) {
	if p.records == 0 {
		p.firstHash, p.oneHash = h, true
	} else if h != p.firstHash {
		p.oneHash = false
	}
	p.records++
}

// joinSlotCount is the table size for n records: a power of two with load ≤ 3/4.
func joinSlotCount(n int) int {
	s := 8
	for s*3/4 < n {
		s <<= 1
	}
	return s
}

// joinTableBytes is the plain memory of the table for n records, offsets excluded.
func joinTableBytes(n int, bits bool) int64 {
	b := int64(joinSlotCount(n))*8 + int64(n)*4
	if bits {
		b += int64((n+63)/64) * 8
	}
	return b
}

// off returns the buffer offset of record i.
func (p *joinPart) off(i uint32) uint64 { return p.offs[i] }

// add appends a build record. On memory.ErrBudgetExceeded the records are unchanged
// (a reserved chunk or table step may remain, still accounted) and the caller spills.
func (p *joinPart) add(res *memory.Reservation, key, val []byte, bits bool) error {
	if p.n >= joinMaxPartRecords {
		return memory.ErrBudgetExceeded
	}
	if p.n == cap(p.offs) {
		c := p.n + max(16, p.n/2)
		if err := res.Grow(int64(c-p.n) * 8); err != nil {
			return err
		}
		p.tableRes += int64(c-p.n) * 8
		offs := make([]uint64, p.n, c)
		copy(offs, p.offs)
		p.offs = offs
	}
	if p.n+1 > p.planned {
		target := p.planned + max(16, p.planned/8)
		grow := joinTableBytes(target, bits) - joinTableBytes(p.planned, bits)
		if err := res.Grow(grow); err != nil {
			return err
		}
		p.tableRes += grow
		p.planned = target
	}
	off, err := p.buf.Append(key, val)
	if err != nil {
		return err
	}
	p.offs = append(p.offs, off)
	p.n++
	return nil
}

// memBytes is the memory the partition holds.
func (p *joinPart) memBytes(segSize int) int64 {
	return int64(p.buf.Segments())*int64(segSize) + p.tableRes
}

// buildTable builds the hash table over the partition's records under seed. Its
// memory was reserved by add. Keys larger than a segment are copied into ks (the
// inserted record's) and hs (a chain head's).
func (p *joinPart) buildTable(seed uint64, bits bool, ks, hs *[]byte) {
	cnt := joinSlotCount(p.n)
	p.slots = make([]uint64, cnt)
	p.mask = uint64(cnt - 1)
	p.next = make([]uint32, p.n)
	if bits {
		p.bits = make([]uint64, (p.n+63)/64)
	}
	for i := 0; i < p.n; i++ {
		var k []byte
		k, *ks = p.buf.Key(p.off(uint32(i)), *ks)
		h := memory.Hash(k, seed)
		tag := h >> 32
		s := h & p.mask
		for {
			e := p.slots[s]
			if e == 0 {
				p.slots[s] = tag<<32 | uint64(i+1)
				break
			}
			if e>>32 == tag {
				head := uint32(e) - 1
				var hk []byte
				hk, *hs = p.buf.Key(p.off(head), *hs)
				if bytes.Equal(hk, k) {
					p.next[i] = p.next[head]
					p.next[head] = uint32(i + 1)
					break
				}
			}
			s = (s + 1) & p.mask
		}
	}
}

// lookup returns the chain head of key (hash h), if the partition holds the key,
// probing from slot s on (the home slot is h&mask). The key read from the buffer
// may be copied into scratch. The partition must hold records.
func (p *joinPart) lookup(h uint64, key []byte, s uint64, scratch *[]byte) (uint32, bool) {
	tag := h >> 32
	for {
		e := p.slots[s]
		if e == 0 {
			return 0, false
		}
		if e>>32 == tag {
			head := uint32(e) - 1
			hk, sc := p.buf.Key(p.off(head), *scratch)
			*scratch = sc
			if bytes.Equal(hk, key) {
				return head, true
			}
		}
		s = (s + 1) & p.mask
	}
}

func (p *joinPart) marked(i uint32) bool { return p.bits[i>>6]&(1<<(i&63)) != 0 }
func (p *joinPart) mark(i uint32)        { p.bits[i>>6] |= 1 << (i & 63) }

// nextInChain returns the record after i in its chain.
func (p *joinPart) nextInChain(i uint32) (uint32, bool) {
	nx := p.next[i]
	return nx - 1, nx != 0
}

// freeMemory drops the records and table and returns their memory.
func (p *joinPart) freeMemory(res *memory.Reservation) {
	p.buf.Free()
	res.Shrink(p.tableRes)
	p.tableRes, p.planned, p.n = 0, 0, 0
	p.offs, p.slots, p.next, p.bits = nil, nil, nil, nil
}
