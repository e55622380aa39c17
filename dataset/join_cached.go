package dataset

import (
	"encoding/binary"
	"fmt"

	"github.com/weirdata/weir/internal/typed"
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
//
// When the invariant input fits in the operator's memory share, it is kept
// instead as Go values in a typed hash table (see typed.Build; records with
// slices or pointers are deep-copied once, through their codec), reserved
// from the manager until the loop ends, and probed every superstep without
// serializing or decoding either side; when it does not fit, what was read is
// replayed into the index.
type staticJoin[L, R, O any] struct {
	static int // the loop-invariant input: 0 (left) or 1 (right)
	index  []*sortjoin.Index
	typedL []*typed.Build[L] // per subtask, when static == 0 and held as values
	typedR []*typed.Build[R] // per subtask, when static == 1 and held as values
	built  []bool            // per subtask: the invariant input was read
}

func newStaticJoin[L, R, O any](static, par int) *staticJoin[L, R, O] {
	return &staticJoin[L, R, O]{static: static, index: make([]*sortjoin.Index, par),
		typedL: make([]*typed.Build[L], par), typedR: make([]*typed.Build[R], par), built: make([]bool, par)}
}

// run is one superstep of one subtask; fn is the user's join function, c the
// collector the typed path emits to (e's).
func (sj *staticJoin[L, R, O]) run(tc *task, li *typed.Input[L], ri *typed.Input[R], kind sortjoin.JoinKind, e *joinEmitter[L, R, O],
	fn func(*L, *R) O, c collector[O], name string) error {
	sub := tc.Subtask
	var replay sortjoin.Iterator // the invariant input, when it did not fit as values
	if !sj.built[sub] {
		sj.built[sub] = true
		var err error
		if sj.static == 1 {
			sj.typedR[sub], replay, err = buildStatic(tc, ri, name)
		} else {
			sj.typedL[sub], replay, err = buildStatic(tc, li, name)
		}
		if err != nil {
			return err
		}
	}
	batch := e.batch
	if t := sj.typedR[sub]; t != nil {
		return probeStatic(tc, t, li, typed.KindOf(kind, false), func(b *R, p *L) O { return fn(p, b) }, c, batch)
	}
	if t := sj.typedL[sub]; t != nil {
		return probeStatic(tc, t, ri, typed.KindOf(kind, true), func(b *L, p *R) O { return fn(b, p) }, c, batch)
	}
	ctx := tc.Context()
	x := sj.index[sub]
	if x == nil {
		x = sortjoin.NewIndex(tc.Env, sortjoin.IndexOptions{Name: name + " index", Memory: tc.memShare, Seed: indexSeed})
		tc.loop.hold(func() { _ = x.Close() })
		sj.index[sub] = x
		var in sortjoin.Iterator = ri
		if sj.static == 0 {
			in = li
		}
		if replay != nil {
			in = replay
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

// variant names what subtask sub keeps of the invariant input.
func (sj *staticJoin[L, R, O]) variant(sub int) variant {
	dense, held := false, true
	switch {
	case sj.typedR[sub] != nil:
		dense = sj.typedR[sub].Dense()
	case sj.typedL[sub] != nil:
		dense = sj.typedL[sub].Dense()
	default:
		held = false
	}
	switch {
	case !held:
		return cachedIndex
	case dense:
		return cachedTypedDense
	}
	return cachedTypedHash
}

// buildStatic reads a loop-invariant input into a typed hash table whose
// memory stays reserved until the loop ends. When the input outgrows the
// operator's share it returns no table but an iterator that replays, in
// serialized form, what was read and then the rest of the input.
func buildStatic[S any](tc *task, in *typed.Input[S], name string) (*typed.Build[S], sortjoin.Iterator, error) {
	res := tc.Env.Memory.NewReservation(name + " invariant input")
	t := typed.NewBuild(in, res, tc.memShare, true)
	replay, err := t.Run(tc.Context(), in)
	if err != nil || replay != nil {
		return nil, replay, err
	}
	tc.loop.hold(func() { _ = res.Release() })
	return t, nil, nil
}

// probeStatic joins one superstep's records of the other input with a typed
// invariant table (no build-side kinds: see cachedJoinKind).
func probeStatic[S, D, O any](tc *task, t *typed.Build[S], in *typed.Input[D], kind typed.Kind,
	pair func(s *S, d *D) O, next collector[O], batch int) error {
	return typed.ProbeAll(tc.Context(), t, in, kind, pair, next.Collect, batch)
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
