package dataset

import (
	"context"
	"fmt"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/internal/typed"
	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/optimizer"
	"github.com/weirdata/weir/sortjoin"
)

// JoinHint forces a join strategy, as Flink's JoinHint does.
type JoinHint = optimizer.JoinHint

// The join hints.
const (
	OptimizerChooses      = optimizer.OptimizerChooses
	BroadcastHashFirst    = optimizer.BroadcastHashFirst
	BroadcastHashSecond   = optimizer.BroadcastHashSecond
	RepartitionHashFirst  = optimizer.RepartitionHashFirst
	RepartitionHashSecond = optimizer.RepartitionHashSecond
	RepartitionSortMerge  = optimizer.RepartitionSortMerge
)

// Join joins l and r on equal keys and applies fn to every matching pair.
// fn gets pointers into weir's buffers (a hash join keeps its build side as
// Go values and passes them as they are): it must not modify *l or *r, nor
// keep the pointers after it returns; what it returns may hold their strings.
// The planner chooses the strategy; WithJoinHint forces one.
func Join[L, R, K, O any](l *DataSet[L], r *DataSet[R], lkey func(L) K, rkey func(R) K, fn func(l *L, r *R) O) *DataSet[O] {
	return join(l, r, lkey, rkey, fn, sortjoin.Inner, "Join at "+caller(1))
}

// LeftOuterJoin is Join that also calls fn(l, nil) for every record of l without
// a match.
func LeftOuterJoin[L, R, K, O any](l *DataSet[L], r *DataSet[R], lkey func(L) K, rkey func(R) K, fn func(l *L, r *R) O) *DataSet[O] {
	return join(l, r, lkey, rkey, fn, sortjoin.LeftOuter, "LeftOuterJoin at "+caller(1))
}

// RightOuterJoin is Join that also calls fn(nil, r) for every record of r
// without a match.
func RightOuterJoin[L, R, K, O any](l *DataSet[L], r *DataSet[R], lkey func(L) K, rkey func(R) K, fn func(l *L, r *R) O) *DataSet[O] {
	return join(l, r, lkey, rkey, fn, sortjoin.RightOuter, "RightOuterJoin at "+caller(1))
}

// FullOuterJoin is Join that also calls fn with a nil side for every record of
// either input without a match.
func FullOuterJoin[L, R, K, O any](l *DataSet[L], r *DataSet[R], lkey func(L) K, rkey func(R) K, fn func(l *L, r *R) O) *DataSet[O] {
	return join(l, r, lkey, rkey, fn, sortjoin.FullOuter, "FullOuterJoin at "+caller(1))
}

// SemiJoin keeps the records of l that have at least one match in r, once each.
func SemiJoin[L, R, K any](l *DataSet[L], r *DataSet[R], lkey func(L) K, rkey func(R) K) *DataSet[L] {
	return join(l, r, lkey, rkey, keepLeft[L, R], sortjoin.Semi, "SemiJoin at "+caller(1))
}

// AntiJoin keeps the records of l that have no match in r.
func AntiJoin[L, R, K any](l *DataSet[L], r *DataSet[R], lkey func(L) K, rkey func(R) K) *DataSet[L] {
	return join(l, r, lkey, rkey, keepLeft[L, R], sortjoin.Anti, "AntiJoin at "+caller(1))
}

// optJoinKind names each join kind for the optimizer's estimates.
var optJoinKind = map[sortjoin.JoinKind]optimizer.JoinKind{
	sortjoin.Inner: optimizer.InnerJoin, sortjoin.LeftOuter: optimizer.LeftOuterJoin,
	sortjoin.RightOuter: optimizer.RightOuterJoin, sortjoin.FullOuter: optimizer.FullOuterJoin,
	sortjoin.Semi: optimizer.SemiJoin, sortjoin.Anti: optimizer.AntiJoin,
}

func keepLeft[L, R any](l *L, _ *R) L { return *l }

func join[L, R, K, O any](l *DataSet[L], r *DataSet[R], lkey func(L) K, rkey func(R) K, fn func(*L, *R) O,
	kind sortjoin.JoinKind, where string) *DataSet[O] {
	env := l.env
	n := env.newNode(optimizer.Join, where, l.n, r.n)
	n.opt.Keyed[0], n.opt.Keyed[1] = true, true
	n.opt.KeyTypes[0], n.opt.KeyTypes[1] = typeName[K](), typeName[K]()
	// An input whose records are emitted by themselves (outer sides; the left of
	// semi and anti joins) must not be broadcast, or every subtask would emit them.
	n.opt.Outer = [2]bool{kind == sortjoin.LeftOuter || kind == sortjoin.FullOuter || kind == sortjoin.Semi || kind == sortjoin.Anti,
		kind == sortjoin.RightOuter || kind == sortjoin.FullOuter}
	n.opt.JoinKind = optJoinKind[kind]
	if r.env != env {
		env.fail(where, fmt.Errorf("the inputs belong to different programs"))
		return newDataSet[O](env, n)
	}
	lk, err1 := typed.NewKeyer[L, K](lkey)
	rk, err2 := typed.NewKeyer[R, K](rkey)
	lc, err3 := memory.NewCodec[L]()
	rc, err4 := memory.NewCodec[R]()
	for _, err := range []error{err1, err2, err3, err4} {
		if err != nil {
			env.fail(where, err)
			return newDataSet[O](env, n)
		}
	}
	connectInput[L](n, 0, lk)
	connectInput[R](n, 1, rk)
	n.op = pulls[O](&joinOp[L, R, K, O]{env: env, n: n, where: where, kind: kind, lk: lk, rk: rk, lc: lc, rc: rc, fn: fn,
		lkey: lkey, rkey: rkey, toInt: intOf[K]()})
	return newDataSet[O](env, n)
}

// joinOp is the operator of the joins: a hash join (typed, or the
// serialized hybrid hash join), a sort-merge join, or in an iteration a
// probe of the index kept of its loop-invariant input.
type joinOp[L, R, K, O any] struct {
	stateless
	env   *Env
	n     *node
	where string
	kind  sortjoin.JoinKind
	lk    *keyer[L]
	rk    *keyer[R]
	lc    *memory.Codec[L]
	rc    *memory.Codec[R]
	fn    func(*L, *R) O
	sj    *staticJoin[L, R, O] // the index kept across supersteps (loopMember.cached)

	// KeyColumns: the key selectors, the key as a source's integer column
	// holds it (nil for other key types), the declared columns, and this
	// stage's runtime filter with the input that publishes it
	lkey    func(L) K
	rkey    func(R) K
	toInt   func(K) int64
	keyCols [2]string
	kf      *keyFilter
	kfBuild int
}

func (o *joinOp[L, R, K, O]) intKey() bool                  { return o.toInt != nil }
func (o *joinOp[L, R, K, O]) setKeyColumns(c [2]string)     { o.keyCols = c }
func (o *joinOp[L, R, K, O]) keyColumns() [2]string         { return o.keyCols }
func (o *joinOp[L, R, K, O]) joinKind() sortjoin.JoinKind   { return o.kind }
func (o *joinOp[L, R, K, O]) setFilter(f *keyFilter, b int) { o.kf, o.kfBuild = f, b }
func (o *joinOp[L, R, K, O]) filterOf() *keyFilter          { return o.kf }
func (o *joinOp[L, R, K, O]) buildSide() int                { return o.kfBuild }

// expectedRows is the planner's estimate of the records a subtask reads
// from input i (all of them when the input is broadcast), 0 when unknown: a
// typed build side sizes its arrays by it.
func (o *joinOp[L, R, K, O]) expectedRows(i int) int {
	p := o.n.planned
	if p == nil || i >= len(p.Inputs) || p.Inputs[i] == nil {
		return 0
	}
	rows := p.Inputs[i].Decision.Estimate.Rows
	if rows <= 0 {
		return 0
	}
	if i < len(p.Decision.Ship) && p.Decision.Ship[i] != optimizer.Broadcast {
		rows /= int64(max(p.Parallelism, 1))
	}
	return int(min(rows, 1<<30))
}

// gatherKeys wraps the build input of a join that publishes a runtime
// filter; the returned function, deferred, abandons the filter if the input
// never ended.
func gatherKeys[T, K any](in typed.Batches[T], key func(T) K, toInt func(K) int64, f *keyFilter) (typed.Batches[T], func()) {
	g := &keyGather[T]{in: in, f: f, key: func(v *T) int64 { return toInt(key(*v)) }}
	return g, func() {
		if !g.added {
			f.abandon()
		}
	}
}

// canCache: a loop-invariant input can be kept as an index when the join
// kind allows it.
func (o *joinOp[L, R, K, O]) canCache(i int) bool { return cachedJoinKind(o.kind, i) }

func (o *joinOp[L, R, K, O]) reset() {
	o.sj = nil
	if m := o.n.loops(); m.cached {
		o.sj = newStaticJoin[L, R, O](m.cacheInput, o.n.opt.Parallelism)
	}
}

func (o *joinOp[L, R, K, O]) run(tc *task, c collector[O]) error {
	ctx := tc.Context()
	var lin typed.Batches[L] = flow.Input[L](tc.TaskContext, 0)
	var rin typed.Batches[R] = flow.Input[R](tc.TaskContext, 1)
	if o.kf != nil && tc.loop == nil {
		var done func()
		if o.kfBuild == 0 {
			lin, done = gatherKeys(lin, o.lkey, o.toInt, o.kf)
		} else {
			rin, done = gatherKeys(rin, o.rkey, o.toInt, o.kf)
		}
		defer done()
	}
	li := typed.NewInput[L](ctx, lin, o.lk, o.lc)
	ri := typed.NewInput[R](ctx, rin, o.rk, o.rc)
	li.Rows, ri.Rows = o.expectedRows(0), o.expectedRows(1)
	e := &joinEmitter[L, R, O]{fn: o.fn, lc: o.lc, rc: o.rc, next: c, batch: o.env.opts.BatchSize}
	name := fmt.Sprintf("%s %d", o.where, tc.Subtask)
	var err error
	if o.sj != nil && tc.loop != nil {
		if err := o.sj.run(tc, li, ri, o.kind, e, o.fn, c, name); err != nil {
			return err
		}
		o.n.variants.ran(o.sj.variant(tc.Subtask))
		if err := e.flush(); err != nil {
			return err
		}
		return c.End()
	}
	switch local := o.n.planned.Decision.Local; local {
	case optimizer.HybridHashBuildFirst, optimizer.HybridHashBuildSecond:
		build := sortjoin.Left
		if local == optimizer.HybridHashBuildSecond {
			build = sortjoin.Right
		}
		// the serialized hybrid hash join, over buildIt in place of the
		// build input
		hashJoin := func(buildIt sortjoin.Iterator) error {
			l, r := sortjoin.Iterator(li), sortjoin.Iterator(ri)
			if build == sortjoin.Left {
				l = buildIt
			} else {
				r = buildIt
			}
			st, err := sortjoin.HashJoin(ctx, tc.Env, sortjoin.HashJoinOptions{Name: name, Build: build}, l, r, o.kind, e.emit)
			tc.Metrics.AddSpilled(st.BytesSpilled)
			return err
		}
		batch := o.env.opts.BatchSize
		res := tc.Env.Memory.NewReservation("typed hash join")
		var out typed.Outcome
		switch {
		case build == sortjoin.Right && typed.Joinable(o.rc):
			out, err = typed.HashJoin(ctx, res, tc.memShare, ri, li, typed.KindOf(o.kind, false),
				func(b *R, p *L) O { return o.fn(p, b) }, c.Collect, batch, hashJoin)
			o.n.variants.ran(joinVariant(out))
		case build == sortjoin.Left && typed.Joinable(o.lc):
			out, err = typed.HashJoin(ctx, res, tc.memShare, li, ri, typed.KindOf(o.kind, true),
				func(b *L, p *R) O { return o.fn(b, p) }, c.Collect, batch, hashJoin)
			o.n.variants.ran(joinVariant(out))
		case build == sortjoin.Left:
			_ = res.Release()
			o.n.variants.ran(hybridHash)
			err = hashJoin(li)
		default:
			_ = res.Release()
			o.n.variants.ran(hybridHash)
			err = hashJoin(ri)
		}
	case optimizer.SortMerge:
		// an input the planner found sorted on the key already (InputLocal
		// NONE) is merged as it arrives
		sorted := func(i int, in sortjoin.Iterator, side string) (sortjoin.Iterator, error) {
			if il := o.n.planned.Decision.InputLocal; i < len(il) && il[i] == optimizer.LocalNone {
				return in, nil
			}
			it, err := sortAll(ctx, tc.newSorter(name+" sort "+side), in)
			if err == nil {
				tc.OnExit(func() { it.Close() })
			}
			return it, err
		}
		o.n.variants.ran(sortMerge)
		var lit, rit sortjoin.Iterator
		if lit, err = sorted(0, li, "left"); err == nil {
			if rit, err = sorted(1, ri, "right"); err == nil {
				err = sortjoin.MergeJoin(ctx, tc.Env, name, lit, rit, o.kind, e.emit)
			}
		}
	default:
		err = fmt.Errorf("local strategy %s cannot run a join", local)
	}
	if err != nil {
		return err
	}
	if err := e.flush(); err != nil {
		return err
	}
	return c.End()
}

// sortAll adds every record of in to s and returns the sorted records.
func sortAll(ctx context.Context, s *sortjoin.Sorter, in sortjoin.Iterator) (sortjoin.Iterator, error) {
	for {
		k, v, ok := in.Next()
		if !ok {
			break
		}
		if err := s.Add(k, v); err != nil {
			return nil, err
		}
	}
	if err := in.Err(); err != nil {
		return nil, err
	}
	return s.Finish(ctx)
}

// joinEmitter decodes joined pairs, applies the join function and sends the
// results downstream a batch at a time.
type joinEmitter[L, R, O any] struct {
	fn    func(*L, *R) O
	lc    *memory.Codec[L]
	rc    *memory.Codec[R]
	next  collector[O]
	buf   []O
	batch int
}

func (e *joinEmitter[L, R, O]) emit(_, left, right []byte) error {
	var lp *L
	var rp *R
	if left != nil {
		lp = new(L)
		if _, err := e.lc.Decode(left, lp); err != nil {
			return err
		}
	}
	if right != nil {
		rp = new(R)
		if _, err := e.rc.Decode(right, rp); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, e.fn(lp, rp))
	if len(e.buf) >= e.batch {
		return e.flush()
	}
	return nil
}

func (e *joinEmitter[L, R, O]) flush() error {
	if len(e.buf) == 0 {
		return nil
	}
	err := e.next.Collect(e.buf)
	e.buf = e.buf[:0]
	return err
}
