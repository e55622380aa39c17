package sortjoin

import (
	"bytes"
	"fmt"

	"github.com/weirdata/weir/memory"
)

// probeBatchMax is the most probe records resolved together.
const probeBatchMax = 128

// probeBatch holds up to probeBatchMax probe records of in-memory partitions,
// copied into one segment (the Iterator's slices do not outlive the next call).
// Resolving them in passes (slots, then candidate offsets, then candidate keys,
// then emission) lets the cache misses of different records overlap instead of
// following each other.
type probeBatch struct {
	arena []byte // one segment of the operator's reservation
	used  int
	n     int
	h     [probeBatchMax]uint64
	part  [probeBatchMax]int32
	ko    [probeBatchMax]int32 // key offset in arena; the value follows the key
	kl    [probeBatchMax]int32
	vl    [probeBatchMax]int32
	slot  [probeBatchMax]uint64 // first slot entry of the probe sequence that is empty or has the tag
	off   [probeBatchMax]uint64 // buffer offset of that slot's record
	pos   [probeBatchMax]uint64 // index of that slot
	found [probeBatchMax]uint8  // probeFound, probeMiss or probeAbsent
}

// What pass 3 of probeBatch found out about a probe record's key.
const (
	probeAbsent uint8 = iota // empty slot (or empty partition): the key is absent
	probeFound               // the slot's record has the key
	probeMiss                // another key with the same tag: probe on from the next slot
)

// add copies a record into the batch; it reports false if the arena is too full.
func (b *probeBatch) add(h uint64, pi int, k, v []byte) bool {
	if b.used+len(k)+len(v) > len(b.arena) {
		return false
	}
	i := b.n
	b.h[i], b.part[i] = h, int32(pi)
	b.ko[i], b.kl[i], b.vl[i] = int32(b.used), int32(len(k)), int32(len(v))
	b.used += copy(b.arena[b.used:], k)
	b.used += copy(b.arena[b.used:], v)
	b.n++
	return true
}

func (b *probeBatch) record(i int) (key, val []byte) {
	ko, ke := int(b.ko[i]), int(b.ko[i]+b.kl[i])
	return b.arena[ko:ke:ke], b.arena[ke : ke+int(b.vl[i]) : ke+int(b.vl[i])]
}

// probe streams the probe input: records of in-memory partitions are joined a
// batch at a time, those of spilled partitions go to the partition's probe file.
// A record too large for the batch's segment is joined on its own.
func (j *hashJoin) probe(lv *joinLevel, in Iterator) error {
	if lv.spilled == 0 && lv.records == 0 && !j.probeOnly {
		return nil // nothing can match and unmatched probe records are not wanted
	}
	b := &j.batch
	b.arena = j.res.ForceSegment() // the batch is part of the fixed minimum
	defer func() {
		j.res.FreeSegment(b.arena)
		b.arena, b.used, b.n = nil, 0, 0
	}()
	for {
		if j.tick += probeBatchMax; j.tick%joinCtxEvery < probeBatchMax {
			if err := j.checkCtx(); err != nil {
				return err
			}
		}
		more, err := j.fillBatch(lv, in)
		if err != nil {
			return err
		}
		if err := j.probeBatch(lv); err != nil {
			return err
		}
		if !more {
			break
		}
	}
	if err := in.Err(); err != nil {
		return fmt.Errorf("sortjoin: %s: level %d: read probe input: %w", j.opts.Name, lv.level, err)
	}
	for i := range lv.parts {
		p := &lv.parts[i]
		if p.pw == nil {
			continue
		}
		w := p.pw
		p.pw = nil
		h, err := j.spill.finish(w)
		if err != nil {
			return j.partErr("probe spill file", lv, i, err)
		}
		p.ph, p.hasProbe = h, true
	}
	return nil
}

// fillBatch reads up to probeBatchMax probe records, or until the input ends (more
// is then false), writing those of spilled partitions to their files, joining
// those too large for the batch's segment at once and batching the others.
func (j *hashJoin) fillBatch(lv *joinLevel, in Iterator) (more bool, err error) {
	b := &j.batch
	b.used, b.n = 0, 0
	for range probeBatchMax {
		k, v, ok := in.Next()
		if !ok {
			return false, nil
		}
		if lv.level == 0 {
			j.stats.ProbeRecords++
		}
		h := memory.Hash(k, lv.seed)
		pi := lv.index(h)
		p := &lv.parts[pi]
		if p.state == joinPartSpilled {
			if err := j.spillProbe(lv, pi, k, v); err != nil {
				return false, err
			}
			continue
		}
		if b.add(h, pi, k, v) {
			continue
		}
		if len(k)+len(v) <= len(b.arena) {
			// The arena is full: join the batch, then start the next one with this record.
			if err := j.probeBatch(lv); err != nil {
				return false, err
			}
			b.used, b.n = 0, 0
			b.add(h, pi, k, v)
			continue
		}
		if err := j.probeRecord(p, h, k, v); err != nil {
			return false, err
		}
	}
	return true, nil
}

// spillProbe appends a probe record to spilled partition pi's probe file.
func (j *hashJoin) spillProbe(lv *joinLevel, pi int, k, v []byte) error {
	p := &lv.parts[pi]
	if p.pw == nil {
		w, err := j.spill.create()
		if err != nil {
			return j.partErr("create probe spill file", lv, pi, err)
		}
		p.pw = w
	}
	if err := p.pw.AppendKV(k, v); err != nil {
		return j.partErr("write probe spill file", lv, pi, err)
	}
	return nil
}

// probeBatch joins the records of the batch with their in-memory partitions.
func (j *hashJoin) probeBatch(lv *joinLevel) error {
	b := &j.batch
	n := b.n
	// Pass 1: for each record, the first slot of its probe sequence that is empty
	// or has its tag (the sequence mostly stays within one cache line).
	for i := range n {
		p := &lv.parts[b.part[i]]
		if p.n == 0 {
			b.slot[i] = 0
			continue
		}
		h := b.h[i]
		tag, s := h>>32, h&p.mask
		for {
			e := p.slots[s]
			if e == 0 || e>>32 == tag {
				b.slot[i], b.pos[i] = e, s
				break
			}
			s = (s + 1) & p.mask
		}
	}
	// Pass 2: the offset of each found slot's record.
	for i := range n {
		if e := b.slot[i]; e != 0 {
			b.off[i] = lv.parts[b.part[i]].off(uint32(e) - 1)
		}
	}
	// Pass 3: compare the keys of those records.
	for i := range n {
		b.found[i] = probeAbsent
		if b.slot[i] == 0 {
			continue
		}
		p := &lv.parts[b.part[i]]
		k, _ := b.record(i)
		hs := cap(j.hs)
		var hk []byte
		hk, j.hs = p.buf.Key(b.off[i], j.hs)
		accountJoinScratch(j.res, hs, j.hs)
		b.found[i] = probeMiss
		if bytes.Equal(hk, k) {
			b.found[i] = probeFound
		}
	}
	// Pass 4: probe on where the slot held another key with the same tag (rare),
	// and emit.
	for i := range n {
		p := &lv.parts[b.part[i]]
		k, v := b.record(i)
		var head uint32
		ok := false
		switch b.found[i] {
		case probeFound:
			head, ok = uint32(b.slot[i])-1, true
		case probeMiss:
			head, ok = j.lookupFrom(p, b.h[i], k, (b.pos[i]+1)&p.mask)
		}
		if err := j.probed(p, head, ok, k, v); err != nil {
			return err
		}
	}
	return nil
}

// lookupFrom looks key up in p starting at slot s.
func (j *hashJoin) lookupFrom(p *joinPart, h uint64, k []byte, s uint64) (uint32, bool) {
	hs := cap(j.hs)
	head, ok := p.lookup(h, k, s, &j.hs)
	accountJoinScratch(j.res, hs, j.hs)
	return head, ok
}

// probeRecord joins one probe record with in-memory partition p.
func (j *hashJoin) probeRecord(p *joinPart, h uint64, k, v []byte) error {
	var head uint32
	var ok bool
	if p.n > 0 {
		head, ok = j.lookupFrom(p, h, k, h&p.mask)
	}
	return j.probed(p, head, ok, k, v)
}

// probed emits what probe record (k, v) yields: ok says whether p holds its key,
// in the chain starting at head.
func (j *hashJoin) probed(p *joinPart, head uint32, ok bool, k, v []byte) error {
	if !ok {
		if j.probeOnly {
			return j.emitProbe(k, v)
		}
		return nil
	}
	switch {
	case j.pairs:
		if j.bits {
			p.mark(head)
		}
		v = presentSide(v)
		for i := head; ; {
			bv := j.buildVal(p, i)
			var err error
			if j.buildLeft {
				err = j.emit(k, bv, v)
			} else {
				err = j.emit(k, v, bv)
			}
			if err != nil {
				return fmt.Errorf("sortjoin: %s: emit: %w", j.opts.Name, err)
			}
			nx, more := p.nextInChain(i)
			if !more {
				return nil
			}
			i = nx
		}
	case j.probeSemi:
		return j.emitProbe(k, v)
	case j.buildSemi:
		if !p.marked(head) {
			p.mark(head)
			return j.emitChain(p, head)
		}
	case j.bits:
		p.mark(head) // anti join, left built: the key is matched
	}
	return nil
}

// buildVal returns the value of build record i of p (valid until the next call).
func (j *hashJoin) buildVal(p *joinPart, i uint32) []byte {
	vs := cap(j.vs)
	var v []byte
	_, v, j.vs = p.buf.Get(p.off(i), j.vs)
	accountJoinScratch(j.res, vs, j.vs)
	return presentSide(v)
}

// emitProbe emits a probe record alone.
func (j *hashJoin) emitProbe(k, v []byte) error {
	var err error
	if j.buildLeft {
		err = j.emit(k, nil, presentSide(v))
	} else {
		err = j.emit(k, presentSide(v), nil)
	}
	if err != nil {
		return fmt.Errorf("sortjoin: %s: emit: %w", j.opts.Name, err)
	}
	return nil
}

// emitBuild emits a build record alone.
func (j *hashJoin) emitBuild(k, v []byte) error {
	var err error
	if j.buildLeft {
		err = j.emit(k, presentSide(v), nil)
	} else {
		err = j.emit(k, nil, presentSide(v))
	}
	if err != nil {
		return fmt.Errorf("sortjoin: %s: emit: %w", j.opts.Name, err)
	}
	return nil
}

// emitChain emits every build record of the chain starting at head alone.
func (j *hashJoin) emitChain(p *joinPart, head uint32) error {
	for i := head; ; {
		vs := cap(j.vs)
		var k, v []byte
		k, v, j.vs = p.buf.Get(p.off(i), j.vs)
		accountJoinScratch(j.res, vs, j.vs)
		if err := j.emitBuild(k, v); err != nil {
			return err
		}
		nx, more := p.nextInChain(i)
		if !more {
			return nil
		}
		i = nx
	}
}
