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
	where := "WithJoinHint at " + caller(1)
	switch {
	case ds.n.opt.Kind != optimizer.Join:
		ds.env.fail(where, fmt.Errorf("%s is not a join", ds.n.name()))
	case h > RepartitionSortMerge:
		ds.env.fail(where, fmt.Errorf("join hint %d is not one of the JoinHint constants", h))
	default:
		ds.n.opt.JoinHint = h
	}
	return ds
}

// WithCrossHint tells the planner the relative sizes of the inputs of the
// Cross that produced ds, as Flink's crossWithTiny and crossWithHuge do. Like
// On, it changes the Cross itself and returns ds; on any other operator it is
// a build error that Execute returns.
func (ds *DataSet[T]) WithCrossHint(h CrossHint) *DataSet[T] {
	where := "WithCrossHint at " + caller(1)
	switch {
	case ds.n.opt.Kind != optimizer.Cross:
		ds.env.fail(where, fmt.Errorf("%s is not a cross", ds.n.name()))
	case h > SecondIsHuge:
		ds.env.fail(where, fmt.Errorf("cross hint %d is not one of the CrossHint constants", h))
	default:
		ds.n.opt.CrossHint = h
	}
	return ds
}
