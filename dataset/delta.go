package dataset

import (
	"context"
	"fmt"
	"sync"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/internal/typed"
	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/optimizer"
	"github.com/weirdata/weir/sortjoin"
)

// indexSeed seeds the solution set's bucket hash: it must differ from
// typed.PartitionSeed, whose high bits already chose the subtask.
const indexSeed = 0x51de5e7

// DeltaIteration is the handle a delta iteration's step function gets: an
// Iteration (superstep, aggregators, convergence) with the solution set, which
// JoinSolution reads.
type DeltaIteration[T, K any] struct {
	*Iteration
	st *deltaState[T, K]
}

// deltaState is a delta iteration's storage: per subtask (hash partition of
// the solution set by key), the solution set's sortjoin.Index, the delta
// received this superstep, and the workset the head replays (cur) and the
// tail fills (next).
type deltaState[T, K any] struct {
	p         int
	key       *keyer[T]
	codec     *memory.Codec[T]
	index     []*sortjoin.Index
	deltas    []*typed.Spool[T]
	built     int
	mu        sync.Mutex
	ready     chan struct{} // closed when every partition of the solution set is built
	indexName string
}

// IterateDelta runs a delta iteration (Flink's DataSet.iterateDelta): the
// solution set, indexed by key, starts as solution; the workset starts as
// workset. Every superstep, step reads the workset (and, with JoinSolution,
// the solution set) and returns a delta, whose records replace or insert the
// solution set's records of the same key at the end of the superstep, and the
// next workset. The iteration ends when the workset is empty, after
// maxIterations supersteps, or on a convergence criterion; its result is the
// solution set.
//
// The solution set lives in managed memory as a hash index per subtask
// (sortjoin.Index), hash-partitioned by key like the workset records that
// probe it, and spills buckets to disk when it outgrows the budget instead of
// failing. Each superstep touches only what the workset names, so a delta
// iteration gets cheaper as its workset shrinks.
func IterateDelta[T, W, K any](solution *DataSet[T], workset *DataSet[W], key func(T) K, maxIterations int,
	step func(it *DeltaIteration[T, K], ws *DataSet[W]) (delta *DataSet[T], next *DataSet[W])) *DataSet[T] {
	env := solution.env
	where := "IterateDelta at " + caller(1)
	lp := env.newLoop(where, maxIterations)
	if maxIterations < 1 {
		env.fail(where, fmt.Errorf("maxIterations is %d: want at least 1", maxIterations))
	}
	p := env.opts.Parallelism
	st := &deltaState[T, K]{p: p, indexName: "solution set"}
	var err error
	if st.key, err = typed.NewKeyer[T, K](key); err != nil {
		env.fail(where, err)
		st.key = &keyer[T]{}
	}
	if st.codec, err = memory.NewCodec[T](); err != nil {
		env.fail(where, err)
	}
	wcodec := typed.CodecOrNil[W]()
	if wcodec == nil {
		env.fail(where, fmt.Errorf("%s has no serializer: the workset is kept serialized between supersteps", typeName[W]()))
	}

	// the solution set's partitions, built before the first superstep probes
	build := env.newNode(optimizer.Sink, "Solution set of "+where, solution.n)
	build.opt.Parallelism = p
	build.opt.Keyed[0] = true
	build.opt.KeyTypes[0] = typeName[K]()
	build.opt.Forced = map[int]optimizer.Ship{0: optimizer.Hash}
	connectInput[T](build, 0, st.key)
	build.op = pulls[none](&solutionSetOp[T, K]{lp: lp, st: st, build: build, where: where, p: p})

	wsState := &bulkState[W]{}
	head := newLoopHead(lp, workset, where, func(tc *task, c collector[W]) error {
		if s := wsState.cur[tc.Subtask]; s != nil {
			return s.Replay(tc.Context(), env.opts.BatchSize, c.Collect)
		}
		return nil
	})
	head.n.opt.Parallelism = p
	it := &DeltaIteration[T, K]{Iteration: &Iteration{lp: lp}, st: st}
	delta, next := step(it, head)
	if delta == nil || next == nil || delta.env != env || next.env != env {
		env.fail(where, fmt.Errorf("the step function returned no delta or workset of this program"))
		return solution
	}
	dtail := newLoopTail[T](lp, delta, "Delta of "+where, nil, func(tc *task) *typed.Spool[T] {
		if st.deltas[tc.Subtask] == nil {
			s := typed.NewSpool[T](tc.Env, fmt.Sprintf("delta %d", tc.Subtask), st.codec)
			lp.hold(s.Release)
			st.deltas[tc.Subtask] = s
		}
		return st.deltas[tc.Subtask]
	})
	dtail.member().loopDelta = true
	dtail.opt.Parallelism = p
	dtail.opt.Keyed[0] = true
	dtail.opt.KeyTypes[0] = typeName[K]()
	dtail.opt.Forced = map[int]optimizer.Ship{0: optimizer.Hash}
	connectInput[T](dtail, 0, st.key)

	wtail := newLoopTail[W](lp, next, "Next workset of "+where, func() { wsState.cur, wsState.next = make([]*typed.Spool[W], p), make([]*typed.Spool[W], p) }, func(tc *task) *typed.Spool[W] {
		if wsState.next[tc.Subtask] == nil {
			s := typed.NewSpool[W](tc.Env, fmt.Sprintf("workset %d", tc.Subtask), wcodec)
			lp.hold(s.Release)
			wsState.next[tc.Subtask] = s
		}
		return wsState.next[tc.Subtask]
	})
	wtail.opt.Parallelism = p
	lp.workset = wtail
	lp.spilled = func() int64 {
		var n int64
		for _, x := range st.index {
			if x != nil {
				n += x.Stats().SpilledBytes
			}
		}
		return n
	}
	lp.seal(where)

	// at every barrier: merge the delta into the solution set, partition by
	// partition in parallel; the next workset becomes the current one
	lp.onStep = append(lp.onStep, func(ctx context.Context) error {
		if err := st.merge(ctx, env.opts.BatchSize); err != nil {
			return fmt.Errorf("dataset: %s: %w", where, err)
		}
		wsState.cur, wsState.next = wsState.next, wsState.cur
		for _, s := range wsState.next {
			if s != nil {
				s.Reset()
			}
		}
		return nil
	})
	res := newLoopResult(lp, "Result of "+where, solution.n, func(tc *task, c collector[T]) error {
		x := st.index[tc.Subtask]
		if x == nil {
			return nil
		}
		return st.emitAll(tc.Context(), x, env.opts.BatchSize, c)
	})
	res.n.opt.Parallelism = p
	return res
}

// solutionSetOp is the operator that builds a delta iteration's solution
// set: subtask i indexes partition i, before the first superstep probes it.
type solutionSetOp[T, K any] struct {
	stateless
	lp    *loop
	st    *deltaState[T, K]
	build *node
	where string
	p     int
}

func (o *solutionSetOp[T, K]) reset() {
	o.st.index = make([]*sortjoin.Index, o.p)
	o.st.deltas = make([]*typed.Spool[T], o.p)
	o.st.built = 0
	o.st.ready = make(chan struct{})
}

func (o *solutionSetOp[T, K]) run(tc *task, _ collector[none]) error {
	x := sortjoin.NewIndex(tc.Env, sortjoin.IndexOptions{Name: fmt.Sprintf("%s %d", o.st.indexName, tc.Subtask), Memory: tc.memShare, Seed: indexSeed})
	// The iteration's last user closes the index, on another goroutine. On a
	// failed job that may be while this build still runs, so the close waits
	// for the build to return.
	var building sync.Mutex
	o.lp.hold(func() {
		building.Lock()
		defer building.Unlock()
		_ = x.Close()
	})
	building.Lock()
	defer building.Unlock()
	o.st.index[tc.Subtask] = x
	var kb, vb []byte
	in := flow.Input[T](tc.TaskContext, 0)
	for {
		b, err := in.Next(tc.Context())
		if err != nil {
			if !isEOF(err) {
				return err
			}
			break
		}
		for i := range b {
			kb = o.st.key.Append(kb[:0], &b[i])
			vb = o.st.codec.Append(vb[:0], &b[i])
			if err := x.Upsert(kb, vb); err != nil {
				return fmt.Errorf("dataset: %s: %w", o.where, err)
			}
		}
		o.build.rows.Add(int64(len(b)))
	}
	o.st.mu.Lock()
	defer o.st.mu.Unlock()
	if o.st.built++; o.st.built == o.local() {
		close(o.st.ready)
	}
	return nil
}

// local returns how many of the solution set's partitions are built in
// this process: all, unless the job is spread.
func (o *solutionSetOp[T, K]) local() int {
	n := 0
	for i := range o.p {
		if !o.lp.env.elsewhere(o.build, i) {
			n++
		}
	}
	return n
}

// merge upserts every partition's delta into its index.
func (st *deltaState[T, K]) merge(ctx context.Context, batch int) error {
	errs := make([]error, st.p)
	var wg sync.WaitGroup
	for i := range st.p {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x, d := st.index[i], st.deltas[i]
			if x == nil {
				return
			}
			if d != nil {
				var kb, vb []byte
				errs[i] = d.Replay(ctx, batch, func(b []T) error {
					for j := range b {
						kb = st.key.Append(kb[:0], &b[j])
						vb = st.codec.Append(vb[:0], &b[j])
						if err := x.Upsert(kb, vb); err != nil {
							return err
						}
					}
					return nil
				})
				d.Reset()
			}
			if errs[i] == nil {
				errs[i] = x.ApplyPending(ctx)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// emitAll sends every record of a solution set partition to c, decoded.
func (st *deltaState[T, K]) emitAll(ctx context.Context, x *sortjoin.Index, batch int, c collector[T]) error {
	buf := make([]T, 0, batch)
	arena := memory.NewArena(0)
	err := x.All(ctx, func(_, value []byte) error {
		var v T
		if _, err := st.codec.DecodeArena(value, &v, arena); err != nil {
			return err
		}
		buf = append(buf, v)
		if len(buf) == batch {
			err := c.Collect(buf)
			clear(buf)
			buf = buf[:0]
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(buf) > 0 {
		return c.Collect(buf)
	}
	return nil
}

// JoinSolution joins the records of ws with the solution set of it on equal
// keys (Flink's join of the workset with the solution set): fn gets every
// record of ws with the solution set's record of its key, or nil when there is
// none, and emits any number of results. ws is partitioned by key like the
// solution set, so each subtask probes its own partition's index; probes of
// buckets spilled to disk are answered at the end of the superstep, in the
// order they were made.
func JoinSolution[W, T, K, O any](ws *DataSet[W], it *DeltaIteration[T, K], wkey func(W) K, fn func(w *W, sol *T, emit func(O))) *DataSet[O] {
	env := ws.env
	where := "JoinSolution at " + caller(1)
	st := it.st
	n := env.newNode(optimizer.MapPartition, where, ws.n)
	n.opt.Parallelism = st.p
	n.opt.Keyed[0] = true
	n.opt.KeyTypes[0] = typeName[K]()
	n.opt.Forced = map[int]optimizer.Ship{0: optimizer.Hash}
	wk, err := typed.NewKeyer[W, K](wkey)
	if err != nil {
		env.fail(where, err)
		wk = &keyer[W]{}
	}
	wcodec := typed.CodecOrNil[W]()
	if wcodec == nil {
		env.fail(where, fmt.Errorf("%s has no serializer", typeName[W]()))
	}
	connectInput[W](n, 0, wk)
	n.op = pulls[O](&joinSolutionOp[W, T, K, O]{env: env, st: st, where: where, wk: wk, wcodec: wcodec, fn: fn})
	return newDataSet[O](env, n)
}

// joinSolutionOp is JoinSolution's operator: it probes its subtask's
// partition of the solution set with the workset's records.
type joinSolutionOp[W, T, K, O any] struct {
	stateless
	env    *Env
	st     *deltaState[T, K]
	where  string
	wk     *keyer[W]
	wcodec *memory.Codec[W]
	fn     func(w *W, sol *T, emit func(O))
}

func (o *joinSolutionOp[W, T, K, O]) run(tc *task, c collector[O]) error {
	select {
	case <-o.st.ready:
	case <-tc.Context().Done():
		return tc.Context().Err()
	}
	x := o.st.index[tc.Subtask]
	e := &flow.Emitter[O]{Next: c, Batch: o.env.opts.BatchSize}
	var (
		w      W
		sol    T
		kb, pb []byte
		arena  = memory.NewArena(0)
	)
	probe := func(payload, value []byte, found bool) error {
		if _, err := o.wcodec.DecodeArena(payload, &w, arena); err != nil {
			return err
		}
		if !found {
			o.fn(&w, nil, e.Emit)
			return e.Err
		}
		if _, err := o.st.codec.DecodeArena(value, &sol, arena); err != nil {
			return err
		}
		o.fn(&w, &sol, e.Emit)
		return e.Err
	}
	in := flow.Input[W](tc.TaskContext, 0)
	for {
		b, err := in.Next(tc.Context())
		if err != nil {
			if !isEOF(err) {
				return err
			}
			break
		}
		for i := range b {
			kb = o.wk.Append(kb[:0], &b[i])
			pb = o.wcodec.Append(pb[:0], &b[i])
			if err := x.Probe(kb, pb, probe); err != nil {
				return fmt.Errorf("dataset: %s: %w", o.where, err)
			}
		}
	}
	if err := x.FinishProbes(tc.Context(), probe); err != nil {
		return fmt.Errorf("dataset: %s: %w", o.where, err)
	}
	return e.End()
}
