package dataset

import (
	"fmt"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/optimizer"
	"github.com/weirdata/weir/spill"
)

// CrossHint tells the planner the relative sizes of a cross's inputs.
type CrossHint = optimizer.CrossHint

// The cross hints, as Flink's crossWithTiny and crossWithHuge.
const (
	CrossAny     = optimizer.CrossAny
	SecondIsTiny = optimizer.SecondIsTiny
	SecondIsHuge = optimizer.SecondIsHuge
)

// crossBlock is the number of records of the streamed input a cross holds while
// it scans the materialized one.
const crossBlock = 4096

// Cross applies fn to every pair of a record of l and a record of r. One input
// is broadcast and materialized (spilled to disk); the other is read a block at
// a time, and the materialized input is scanned once per block.
func Cross[L, R, O any](l *DataSet[L], r *DataSet[R], fn func(l *L, r *R) O) *DataSet[O] {
	env := l.env
	where := "Cross at " + caller(1)
	n := env.newNode(optimizer.Cross, where, l.n, r.n)
	lc, err1 := memory.NewCodec[L]()
	rc, err2 := memory.NewCodec[R]()
	for _, err := range []error{err1, err2} {
		if err != nil {
			env.fail(where, err)
			return newDataSet[O](env, n)
		}
	}
	connectInput[L](n, 0, nil)
	connectInput[R](n, 1, nil)
	n.op = pulls[O](&crossOp[L, R, O]{env: env, n: n, lc: lc, rc: rc, fn: fn})
	return newDataSet[O](env, n)
}

// crossOp is Cross's operator: it materializes one input and streams the
// other past it a block at a time.
type crossOp[L, R, O any] struct {
	stateless
	env *Env
	n   *node
	lc  *memory.Codec[L]
	rc  *memory.Codec[R]
	fn  func(*L, *R) O
}

func (o *crossOp[L, R, O]) run(tc *task, c collector[O]) error {
	e := &flow.Emitter[O]{Next: c, Batch: o.env.opts.BatchSize}
	space := spill.NewSpace(tc.Env.FS, fmt.Sprintf("cross-%d", tc.Subtask), tc.Env.Spill)
	tc.OnExit(func() { space.Close() })
	var err error
	if o.n.planned.Decision.Local == optimizer.NestedLoopsBlockSecond {
		// input 0 is materialized, input 1 streamed
		err = crossBlocks(tc, space, 1, 0, o.rc, o.lc, func(r *R, l *L) { e.Emit(o.fn(l, r)) })
	} else {
		err = crossBlocks(tc, space, 0, 1, o.lc, o.rc, func(l *L, r *R) { e.Emit(o.fn(l, r)) })
	}
	if err != nil {
		return err
	}
	if e.Err != nil {
		return e.Err
	}
	return e.End()
}

// crossBlocks materializes input m (records of M) in a spill file, then reads
// input s (records of S) a block at a time and calls pair for every record of
// the block with every materialized record.
func crossBlocks[S, M any](tc *task, space *spill.Space, s, m int, sc *memory.Codec[S], mc *memory.Codec[M], pair func(*S, *M)) error {
	ctx := tc.Context()
	w, err := space.Create()
	if err != nil {
		return err
	}
	mat := flow.Input[M](tc.TaskContext, m)
	var buf []byte
	for {
		b, err := mat.Next(ctx)
		if err != nil {
			if isEOF(err) {
				break
			}
			w.Abort()
			return err
		}
		for i := range b {
			buf = mc.Append(buf[:0], &b[i])
			if err := w.Append(buf); err != nil {
				w.Abort()
				return err
			}
		}
	}
	h, err := w.Finish()
	if err != nil {
		return err
	}
	tc.Metrics.AddSpilled(h.Bytes)
	sin := flow.Input[S](tc.TaskContext, s)
	block := make([]S, 0, crossBlock)
	scan := func() error {
		r, err := space.Open(h)
		if err != nil {
			return err
		}
		defer r.Close()
		var v M
		for {
			rec, err := r.Next()
			if err != nil {
				if isEOF(err) {
					return nil
				}
				return err
			}
			if _, err := mc.Decode(rec, &v); err != nil {
				return err
			}
			for i := range block {
				pair(&block[i], &v)
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	for {
		b, err := sin.Next(ctx)
		if err != nil && !isEOF(err) {
			return err
		}
		if b != nil {
			block = append(block, b...)
		}
		if len(block) >= crossBlock || (isEOF(err) && len(block) > 0) {
			if err := scan(); err != nil {
				return err
			}
			block = block[:0]
		}
		if isEOF(err) {
			return nil
		}
	}
}
