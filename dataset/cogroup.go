package dataset

import (
	"fmt"
	"iter"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/internal/typed"
	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/optimizer"
)

// CoGroup groups l and r by key and calls fn once per key present in either,
// with that key's records of l and of r (either may be empty); fn emits any
// number of results. Each sequence is valid only during the call and may be
// ranged over once, in any order.
func CoGroup[L, R, K, O any](l *DataSet[L], r *DataSet[R], lkey func(L) K, rkey func(R) K,
	fn func(key K, ls iter.Seq[L], rs iter.Seq[R], emit func(O))) *DataSet[O] {
	env := l.env
	where := "CoGroup at " + caller(1)
	n := env.newNode(optimizer.CoGroup, where, l.n, r.n)
	n.opt.Keyed[0], n.opt.Keyed[1] = true, true
	n.opt.KeyTypes[0], n.opt.KeyTypes[1] = typeName[K](), typeName[K]()
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
	n.op = pulls[O](&coGroupOp[L, R, K, O]{where: where, lk: lk, rk: rk, lc: lc, rc: rc, lkey: lkey, rkey: rkey, fn: fn, batch: env.opts.BatchSize})
	return newDataSet[O](env, n)
}

// coGroupOp is CoGroup's operator: it sorts both inputs by key and merges them.
type coGroupOp[L, R, K, O any] struct {
	stateless
	where string
	lk    *keyer[L]
	rk    *keyer[R]
	lc    *memory.Codec[L]
	rc    *memory.Codec[R]
	lkey  func(L) K
	rkey  func(R) K
	fn    func(key K, ls iter.Seq[L], rs iter.Seq[R], emit func(O))
	batch int
}

func (o *coGroupOp[L, R, K, O]) run(tc *task, c collector[O]) error {
	ctx := tc.Context()
	name := fmt.Sprintf("%s %d", o.where, tc.Subtask)
	ls, rs := tc.newSorter(name+" sort left"), tc.newSorter(name+" sort right")
	lit, err := sortAll(ctx, ls, typed.NewInput[L](ctx, flow.Input[L](tc.TaskContext, 0), o.lk, o.lc))
	if err != nil {
		return err
	}
	defer lit.Close()
	rit, err := sortAll(ctx, rs, typed.NewInput[R](ctx, flow.Input[R](tc.TaskContext, 1), o.rk, o.rc))
	if err != nil {
		return err
	}
	defer rit.Close()
	e := &flow.Emitter[O]{Next: c, Batch: o.batch}
	err = typed.CoGroupSorted(ctx, lit, rit, o.lc, o.rc, o.lkey, o.rkey, func(k K, ls iter.Seq[L], rs iter.Seq[R]) error {
		o.fn(k, ls, rs, e.Emit)
		return e.Err
	})
	if err != nil {
		return err
	}
	return e.End()
}
