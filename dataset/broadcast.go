package dataset

import (
	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/optimizer"
)

// FlatMapWithBroadcast calls fn for every record of ds with all the records of
// bs (a broadcast set: every subtask gets every record of bs, read before ds's
// records are processed; keep it small); fn emits any number of results.
func FlatMapWithBroadcast[T, B, U any](ds *DataSet[T], bs *DataSet[B], fn func(v T, bset []B, emit func(U))) *DataSet[U] {
	env := ds.env
	n := env.newNode(optimizer.MapPartition, "FlatMapWithBroadcast at "+caller(1), ds.n, bs.n)
	n.opt.Parallelism = ds.n.opt.Parallelism
	n.opt.Forced = map[int]optimizer.Ship{1: optimizer.Broadcast}
	connectInput[T](n, 0, nil)
	connectInput[B](n, 1, nil)
	n.op = pulls[U](&broadcastOp[T, B, U]{fn: fn, batch: env.opts.BatchSize})
	return newDataSet[U](env, n)
}

// broadcastOp is FlatMapWithBroadcast's operator: it reads the broadcast
// set (input 1), then input 0.
type broadcastOp[T, B, U any] struct {
	stateless
	fn    func(v T, bset []B, emit func(U))
	batch int
}

func (o *broadcastOp[T, B, U]) run(tc *task, c collector[U]) error {
	fn := o.fn
	{
		var set []B
		bin := flow.Input[B](tc.TaskContext, 1)
		for {
			b, err := bin.Next(tc.Context())
			if err != nil {
				if isEOF(err) {
					break
				}
				return err
			}
			set = append(set, b...)
		}
		e := &flow.Emitter[U]{Next: c, Batch: o.batch}
		var readErr error
		for b := range flow.Batches[T](tc.TaskContext, 0, &readErr) {
			for i := range b {
				fn(b[i], set, e.Emit)
			}
			if e.Err != nil {
				return e.Err
			}
		}
		if readErr != nil {
			return readErr
		}
		return e.End()
	}
}

// MapWithBroadcast applies fn to every record of ds with all the records of the
// broadcast set bs (see FlatMapWithBroadcast).
func MapWithBroadcast[T, B, U any](ds *DataSet[T], bs *DataSet[B], fn func(v T, bset []B) U) *DataSet[U] {
	out := FlatMapWithBroadcast(ds, bs, func(v T, set []B, emit func(U)) { emit(fn(v, set)) })
	out.n.opt.Name = "MapWithBroadcast at " + caller(1)
	return out
}
