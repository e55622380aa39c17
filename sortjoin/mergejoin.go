package sortjoin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/resource"
	"github.com/weirdata/weir/spill"
)

// joinCtxEvery is how many records an operator handles between two checks of its context.
const joinCtxEvery = 1024

// MergeJoin joins two inputs sorted ascending by key (bytes.Compare) and calls emit
// for each result of kind, in key order. It consumes but does not close left and
// right, and returns the first error of an input, of emit, of the context or of a
// spill file. A key smaller than the one before it on either side fails the join
// with ErrUnsortedInput, naming the side.
//
// It never fails for size: it holds only the right input's current key group, and
// a group that does not fit in memory goes to a spill file that is replayed once per
// block of left records of that key.
//
//	left  ─► a a b c c ─┐         ┌─ group of c: RecordBuffer ──(budget hit)──► spill file
//	                    ├─ compare ┤                                                │
//	right ─► a b b c d ─┘         └─ for each block of left c's: replay group ◄─────┘
//
// It streams (advancing the smaller key) until both sides reach a key K, then
// collects the right group of K and pairs the left records of K with it. The group
// goes through the states of keyGroupState: in memory → (budget hit) writing to a
// file → replaying the finished file once per block of left records.
//
// Memory (one reservation named name): the right group's RecordBuffer and offsets,
// and, once the group has spilled, one writer or reader buffer plus a RecordBuffer
// block of left records of the group's key; all of it through Grow, which
// succeeds past the budget up to the manager's floor (memory.Reservation.SetFloor:
// a group smaller than that never goes to a file of its own), except the fixed
// minimum taken with Force: one file buffer, one left record and the copies of the
// current keys. Every byte is released and every spill file removed before
// MergeJoin returns, on every path.
//
// The context is checked every 1024 records and once per replay of a spilled group.
func MergeJoin(ctx context.Context, env resource.Env, name string, left, right Iterator, kind JoinKind, emit EmitFunc) error {
	if name == "" {
		name = "mergejoin"
	}
	if env.Memory == nil {
		return fmt.Errorf("sortjoin: %s: Env.Memory is nil", name)
	}
	if kind > Anti {
		return fmt.Errorf("sortjoin: %s: unknown join kind %v", name, kind)
	}
	j := &mergeJoin{ctx: ctx, name: name, kind: kind, emit: emit}
	j.res = env.Memory.NewReservation(name)
	j.res.SetFloor(env.Memory.Floor())
	j.spill = newJoinSpill(env, name, j.res)
	j.l = joinInput{it: left, side: Left, name: name}
	j.r = joinInput{it: right, side: Right, name: name}
	j.group.buf = memory.NewRecordBuffer(j.res)
	j.block.buf = memory.NewRecordBuffer(j.res)
	j.leftOnly = kind == LeftOuter || kind == FullOuter || kind == Anti
	j.rightOnly = kind == RightOuter || kind == FullOuter
	err := j.run()
	return errors.Join(err, j.close())
}

// mergeJoin is the state of one MergeJoin call.
type mergeJoin struct {
	ctx   context.Context
	name  string
	kind  JoinKind
	emit  EmitFunc
	res   *memory.Reservation
	spill joinSpill

	l, r joinInput
	// leftOnly and rightOnly say whether unmatched left (right) records are emitted.
	leftOnly, rightOnly bool

	gkey   []byte // key of the current group, copied
	gstate keyGroupState
	group  joinRecords   // the group, in keyGroupMemory
	w      *spill.Writer // the group file, in keyGroupWriting
	h      spill.Handle  // the group file, in keyGroupReplaying
	block  joinRecords   // left records of the group key, in keyGroupReplaying
	rd     *spill.Reader // the group file, during one replay
	tick   int
}

// keyGroupState says where the merge join's current right key group is.
type keyGroupState uint8

const (
	// keyGroupMemory: the group is in the group list (also between groups).
	keyGroupMemory keyGroupState = iota
	// keyGroupWriting: the group outgrew memory; its records go to the file w.
	keyGroupWriting
	// keyGroupReplaying: the file h is complete and replayed for each block of left
	// records of the key; it is removed afterwards (back to keyGroupMemory).
	keyGroupReplaying
)

// groupKeepSegments is the most segments the group list keeps for the next group;
// a larger group's memory is returned once it is paired.
const groupKeepSegments = 4

// joinInput is one sorted input of a merge join and its order check.
type joinInput struct {
	it   Iterator
	side Side
	name string
	key  []byte
	val  []byte
	ok   bool
	prev []byte // copy of the last key, to check the order
	seen bool
}

// next advances the input and checks that its keys do not decrease.
func (in *joinInput) next(res *memory.Reservation) error {
	k, v, ok := in.it.Next()
	if !ok {
		in.ok, in.key, in.val = false, nil, nil
		if err := in.it.Err(); err != nil {
			return fmt.Errorf("sortjoin: %s: read %s input: %w", in.name, in.side, err)
		}
		return nil
	}
	if in.seen && bytes.Compare(k, in.prev) < 0 {
		in.ok = false
		return fmt.Errorf("sortjoin: %s: %s input: key %x after %x: %w", in.name, in.side, k, in.prev, ErrUnsortedInput)
	}
	in.prev = copyJoinKey(res, in.prev, k)
	in.seen = true
	in.ok, in.key, in.val = true, k, v
	return nil
}

// joinRecords is a RecordBuffer with the offsets of its records, in order.
type joinRecords struct {
	buf     *memory.RecordBuffer
	offs    []uint64
	scratch []byte
}

// add appends a record; on ErrBudgetExceeded the list is unchanged. force takes
// memory past the budget.
func (l *joinRecords) add(res *memory.Reservation, key, val []byte, force bool) error {
	if len(l.offs) == cap(l.offs) {
		c := max(64, 2*cap(l.offs))
		grow := int64(c-cap(l.offs)) * 8
		if force {
			res.Force(grow)
		} else if err := res.Grow(grow); err != nil {
			return err
		}
		offs := make([]uint64, len(l.offs), c)
		copy(offs, l.offs)
		l.offs = offs
	}
	if force {
		l.offs = append(l.offs, l.buf.AppendForce(key, val))
		return nil
	}
	off, err := l.buf.Append(key, val)
	if err != nil {
		return err
	}
	l.offs = append(l.offs, off)
	return nil
}

// get returns record i; see memory.RecordBuffer.Get for aliasing.
func (l *joinRecords) get(res *memory.Reservation, i int) (key, val []byte) {
	before := cap(l.scratch)
	key, val, l.scratch = l.buf.Get(l.offs[i], l.scratch)
	accountJoinScratch(res, before, l.scratch)
	return key, val
}

// reset empties the list and keeps its memory for the next group.
func (l *joinRecords) reset() {
	l.buf.Reset()
	l.offs = l.offs[:0]
}

// free empties the list and returns its memory.
func (l *joinRecords) free(res *memory.Reservation) {
	l.buf.Free()
	res.Shrink(int64(cap(l.offs)) * 8)
	l.offs = nil
}

// step counts one record and checks the context every joinCtxEvery records.
func (j *mergeJoin) step() error {
	if j.tick++; j.tick%joinCtxEvery == 0 {
		return j.checkCtx()
	}
	return nil
}

func (j *mergeJoin) checkCtx() error {
	if err := j.ctx.Err(); err != nil {
		return fmt.Errorf("sortjoin: %s: %w", j.name, err)
	}
	return nil
}

func (j *mergeJoin) out(key, left, right []byte) error {
	if err := j.emit(key, left, right); err != nil {
		return fmt.Errorf("sortjoin: %s: emit: %w", j.name, err)
	}
	return nil
}

func (j *mergeJoin) run() error {
	if err := j.checkCtx(); err != nil {
		return err
	}
	if err := j.l.next(j.res); err != nil {
		return err
	}
	if err := j.r.next(j.res); err != nil {
		return err
	}
	for j.l.ok && j.r.ok {
		if err := j.step(); err != nil {
			return err
		}
		switch c := bytes.Compare(j.l.key, j.r.key); {
		case c < 0:
			if j.leftOnly {
				if err := j.out(j.l.key, presentSide(j.l.val), nil); err != nil {
					return err
				}
			}
			if err := j.l.next(j.res); err != nil {
				return err
			}
		case c > 0:
			if j.rightOnly {
				if err := j.out(j.r.key, nil, presentSide(j.r.val)); err != nil {
					return err
				}
			}
			if err := j.r.next(j.res); err != nil {
				return err
			}
		default:
			if err := j.joinKey(); err != nil {
				return err
			}
		}
	}
	for j.l.ok && j.leftOnly {
		if err := j.step(); err != nil {
			return err
		}
		if err := j.out(j.l.key, presentSide(j.l.val), nil); err != nil {
			return err
		}
		if err := j.l.next(j.res); err != nil {
			return err
		}
	}
	for j.r.ok && j.rightOnly {
		if err := j.step(); err != nil {
			return err
		}
		if err := j.out(j.r.key, nil, presentSide(j.r.val)); err != nil {
			return err
		}
		if err := j.r.next(j.res); err != nil {
			return err
		}
	}
	return nil
}

// joinKey handles the key both inputs are positioned on.
func (j *mergeJoin) joinKey() error {
	j.gkey = copyJoinKey(j.res, j.gkey, j.r.key)
	if j.kind == Semi || j.kind == Anti {
		for j.l.ok && bytes.Equal(j.l.key, j.gkey) {
			if err := j.step(); err != nil {
				return err
			}
			if j.kind == Semi {
				if err := j.out(j.l.key, presentSide(j.l.val), nil); err != nil {
					return err
				}
			}
			if err := j.l.next(j.res); err != nil {
				return err
			}
		}
		for j.r.ok && bytes.Equal(j.r.key, j.gkey) {
			if err := j.step(); err != nil {
				return err
			}
			if err := j.r.next(j.res); err != nil {
				return err
			}
		}
		return nil
	}
	if err := j.collect(); err != nil {
		return err
	}
	if j.gstate == keyGroupWriting {
		return j.pairSpilled()
	}
	for j.l.ok && bytes.Equal(j.l.key, j.gkey) {
		if err := j.step(); err != nil {
			return err
		}
		lv := presentSide(j.l.val)
		for i := range j.group.offs {
			_, rv := j.group.get(j.res, i)
			if err := j.out(j.gkey, lv, presentSide(rv)); err != nil {
				return err
			}
		}
		if err := j.l.next(j.res); err != nil {
			return err
		}
	}
	if j.group.buf.Segments() > groupKeepSegments {
		j.group.free(j.res) // an unusually large group: do not keep its memory
	}
	return nil
}

// collect reads the right input's group of key gkey into the group list, moving it
// to a spill file when memory runs out.
func (j *mergeJoin) collect() error {
	j.group.reset()
	for j.r.ok && bytes.Equal(j.r.key, j.gkey) {
		if err := j.step(); err != nil {
			return err
		}
		if j.gstate == keyGroupWriting {
			if err := j.w.AppendKV(nil, j.r.val); err != nil {
				return fmt.Errorf("sortjoin: %s: spill key group: %w", j.name, err)
			}
		} else if err := j.group.add(j.res, nil, j.r.val, false); err != nil {
			if !errors.Is(err, memory.ErrBudgetExceeded) {
				return err
			}
			if err := j.spillGroup(); err != nil {
				return err
			}
			continue // append the record to the file
		}
		if err := j.r.next(j.res); err != nil {
			return err
		}
	}
	return nil
}

// spillGroup moves the records collected so far to a new spill file and frees
// their memory; the rest of the group is appended to the file.
func (j *mergeJoin) spillGroup() error {
	w, err := j.spill.create()
	if err != nil {
		return err
	}
	j.w, j.gstate = w, keyGroupWriting
	for i := range j.group.offs {
		_, v := j.group.get(j.res, i)
		if err := w.AppendKV(nil, v); err != nil {
			return fmt.Errorf("sortjoin: %s: spill key group: %w", j.name, err)
		}
	}
	j.group.free(j.res)
	return nil
}

// pairSpilled pairs the left records of gkey with the spilled group: it fills a
// block with as many of them as memory allows (at least one) and replays the group
// file once per block.
func (j *mergeJoin) pairSpilled() error {
	w := j.w
	j.w, j.gstate = nil, keyGroupMemory
	h, err := j.spill.finish(w)
	if err != nil {
		return err
	}
	j.h, j.gstate = h, keyGroupReplaying
	for j.l.ok && bytes.Equal(j.l.key, j.gkey) {
		if err := j.checkCtx(); err != nil {
			return err
		}
		if j.rd, err = j.spill.open(h); err != nil {
			return err
		}
		j.block.reset()
		for j.l.ok && bytes.Equal(j.l.key, j.gkey) {
			if err := j.block.add(j.res, nil, j.l.val, len(j.block.offs) == 0); err != nil {
				if errors.Is(err, memory.ErrBudgetExceeded) {
					break
				}
				return err
			}
			if err := j.l.next(j.res); err != nil {
				return err
			}
		}
		if err := j.replay(); err != nil {
			return err
		}
		rd := j.rd
		j.rd = nil
		if err := j.spill.closeReader(rd); err != nil {
			return err
		}
	}
	j.block.free(j.res)
	j.gstate = keyGroupMemory
	return j.spill.remove(h)
}

// replay pairs every record of the open group file with every record of the block.
func (j *mergeJoin) replay() error {
	for {
		_, rv, err := j.rd.NextKV()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("sortjoin: %s: replay key group: %w", j.name, err)
		}
		rv = presentSide(rv)
		for i := range j.block.offs {
			_, lv := j.block.get(j.res, i)
			if err := j.out(j.gkey, presentSide(lv), rv); err != nil {
				return err
			}
		}
	}
}

// close releases everything the join holds; it is safe on every path.
func (j *mergeJoin) close() error {
	var errs []error
	if j.rd != nil {
		errs = append(errs, j.spill.closeReader(j.rd))
		j.rd = nil
	}
	switch j.gstate {
	case keyGroupWriting:
		j.spill.abort(j.w)
		j.w = nil
	case keyGroupReplaying:
		errs = append(errs, j.spill.remove(j.h))
	}
	j.gstate = keyGroupMemory
	j.group.free(j.res)
	j.block.free(j.res)
	errs = append(errs, j.spill.close())
	if err := j.res.Release(); err != nil {
		errs = append(errs, fmt.Errorf("sortjoin: %s: %w", j.name, err))
	}
	return errors.Join(errs...)
}
