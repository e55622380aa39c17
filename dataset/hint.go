package dataset

import (
	"fmt"

	"github.com/weirdata/weir/optimizer"
)

// WithJoinHint forces the strategy of the join that produced ds (Join, the
// outer joins, SemiJoin, AntiJoin), as Flink's JoinHint does:
//
//	big := dataset.Join(orders, nations, okey, nkey, fn).WithJoinHint(dataset.BroadcastHashSecond)
//
// Like On, it changes the join itself and returns ds: every data set that
// holds the join's output sees the hint. On any other operator it is a build
// error that Execute returns.
func (ds *DataSet[T]) WithJoinHint(h JoinHint) *DataSet[T] {
	ds.env.withJoinHint(ds.n, h)
	return ds
}

// withJoinHint is WithJoinHint's body, untyped: compiled once, not once per record type.
func (env *Env) withJoinHint(n *node, h JoinHint) {
	where := "WithJoinHint at " + caller(2)
	switch {
	case n.opt.Kind != optimizer.Join:
		env.fail(where, fmt.Errorf("%s is not a join", n.name()))
	case h > RepartitionSortMerge:
		env.fail(where, fmt.Errorf("join hint %d is not one of the JoinHint constants", h))
	default:
		n.opt.JoinHint = h
	}
}

// WithCrossHint tells the planner the relative sizes of the inputs of the
// Cross that produced ds, as Flink's crossWithTiny and crossWithHuge do. Like
// On, it changes the Cross itself and returns ds; on any other operator it is
// a build error that Execute returns.
func (ds *DataSet[T]) WithCrossHint(h CrossHint) *DataSet[T] {
	ds.env.withCrossHint(ds.n, h)
	return ds
}

// withCrossHint is WithCrossHint's body, untyped: compiled once, not once per record type.
func (env *Env) withCrossHint(n *node, h CrossHint) {
	where := "WithCrossHint at " + caller(2)
	switch {
	case n.opt.Kind != optimizer.Cross:
		env.fail(where, fmt.Errorf("%s is not a cross", n.name()))
	case h > SecondIsHuge:
		env.fail(where, fmt.Errorf("cross hint %d is not one of the CrossHint constants", h))
	default:
		n.opt.CrossHint = h
	}
}
