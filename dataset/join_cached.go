package dataset

import (
	"encoding/binary"
	"fmt"

	"github.com/weirdata/weir/sortjoin"
)

// cachedJoinKinds says which join kinds can keep a loop-invariant input as a
// hash index across supersteps, by that input's side: every record the join
// must emit unmatched has to come from the other (probing) side.
func cachedJoinKind(kind sortjoin.JoinKind, static int) bool {
	switch kind {
	case sortjoin.Inner:
		return true
	case sortjoin.LeftOuter, sortjoin.Semi, sortjoin.Anti:
		return static == 1
	case sortjoin.RightOuter:
		return static == 0
	}
	return false
}

// staticJoin is a join inside an iteration one of whose inputs is
// loop-invariant (the edges of a graph, say): in the first superstep each
// subtask reads its part of that input once, groups it by key (a sort) and
// keeps the groups in a sortjoin.Index, in managed memory and spilling; every
// superstep then probes the index with the other input's records. Nothing of
// the invariant input is read, shipped or hashed again (Flink's cached static
// path of an iteration).
type staticJoin[L, R, O any] struct {
	static int // the loop-invariant input: 0 (left) or 1 (right)
	index  []*sortjoin.Index
}

// run is one superstep of one subtask.
func (sj *staticJoin[L, R, O]) run(tc *task, li *inputIter[L], ri *inputIter[R], kind sortjoin.JoinKind, e *joinEmitter[L, R, O], name string) error {
	ctx := tc.Context()
	x := sj.index[tc.Subtask]
	if x == nil {
		x = sortjoin.NewIndex(tc.Env, sortjoin.IndexOptions{Name: name + " index", Memory: tc.memShare, Seed: indexSeed})
		tc.loop.hold(func() { _ = x.Close() })
		sj.index[tc.Subtask] = x
		var in sortjoin.Iterator = ri
		if sj.static == 0 {
			in = li
		}
		sorted, err := sortAll(ctx, tc.newSorter(name+" sort invariant input"), in)
		if err != nil {
			return err
		}
		err = groupInto(x, sorted)
		sorted.Close()
		if err == nil {
			err = x.ApplyPending(ctx)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	probe := func(dyn, group []byte, found bool) error {
		switch {
		case kind == sortjoin.Semi:
			if found {
				return e.emit(nil, dyn, nil)
			}
			return nil
		case kind == sortjoin.Anti:
			if !found {
				return e.emit(nil, dyn, nil)
			}
			return nil
		case !found:
			if kind == sortjoin.Inner {
				return nil
			}
			if sj.static == 1 {
				return e.emit(nil, dyn, nil)
			}
			return e.emit(nil, nil, dyn)
		}
		for len(group) > 0 {
			l, h := binary.Uvarint(group)
			if h <= 0 || uint64(len(group)-h) < l {
				return fmt.Errorf("internal error: corrupt group")
			}
			v := group[h : h+int(l)]
			group = group[h+int(l):]
			var err error
			if sj.static == 1 {
				err = e.emit(nil, dyn, v)
			} else {
				err = e.emit(nil, v, dyn)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	var dyn sortjoin.Iterator = li
	if sj.static == 0 {
		dyn = ri
	}
	for {
		k, v, ok := dyn.Next()
		if !ok {
			break
		}
		if err := x.Probe(k, v, probe); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := dyn.Err(); err != nil {
		return err
	}
	if err := x.FinishProbes(ctx, probe); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// groupInto stores every key of a sorted iterator in x with all its values,
// each prefixed by its length.
func groupInto(x *sortjoin.Index, it sortjoin.Iterator) error {
	var key, group []byte
	have := false
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		if have && string(k) != string(key) {
			if err := x.Upsert(key, group); err != nil {
				return err
			}
			group = group[:0]
		}
		if !have || string(k) != string(key) {
			key = append(key[:0], k...)
			have = true
		}
		group = binary.AppendUvarint(group, uint64(len(v)))
		group = append(group, v...)
	}
	if err := it.Err(); err != nil {
		return err
	}
	if have {
		return x.Upsert(key, group)
	}
	return nil
}
