package dataset

import (
	"bytes"
	"fmt"
	"iter"
	"slices"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/internal/typed"
	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/optimizer"
	"github.com/weirdata/weir/sortjoin"
)

// SortPartition sorts each partition of ds by key in the given order (Flink's
// sortPartition): the records of every subtask come out sorted, the subtasks
// stay as they were.
func SortPartition[T, K any](ds *DataSet[T], key func(T) K, o Order) *DataSet[T] {
	return sortBy(ds, key, o, false, "SortPartition at "+caller(1))
}

// sortFacts records what the optimizer knows of a sort: it passes its input
// records through, its key's type and its direction per key part.
func sortFacts(n *node, keyType string, desc []bool) {
	n.opt.PreservesAll = true
	n.opt.KeyTypes[0] = keyType
	n.desc = desc
}

// Sort sorts the whole data set by key: it range-partitions the records by
// boundaries sampled from the data and sorts every partition, so subtask i
// holds keys no greater than subtask i+1's and Collect returns them in order.
func Sort[T, K any](ds *DataSet[T], key func(T) K, o Order) *DataSet[T] {
	return sortBy(ds, key, o, true, "Sort at "+caller(1))
}

func sortBy[T, K any](ds *DataSet[T], key func(T) K, o Order, total bool, where string) *DataSet[T] {
	k, err := newSortKeyer[T, K](key, o)
	if err != nil {
		ds.env.fail(where, err)
		k = &keyer[T]{}
	}
	out := sortByKeyer(ds, k, total, where)
	sortFacts(out.n, typeName[K](), []bool{o == Descending})
	return out
}

// sortByKeyer sorts ds by the encoded key k appends (see Sort, SortPartition).
func sortByKeyer[T any](ds *DataSet[T], k *keyer[T], total bool, where string) *DataSet[T] {
	env := ds.env
	n := env.newNode(optimizer.Sort, where, ds.n)
	n.opt.Ordered[0] = total
	if k.Append == nil { // the key could not be built: the error is recorded
		return newDataSet[T](env, n)
	}
	codec, err := memory.NewCodec[T]()
	if err != nil {
		env.fail(where, err)
		return newDataSet[T](env, n)
	}
	connectInput[T](n, 0, k)
	n.op = pulls[T](&sortOp[T]{env: env, n: n, where: where, k: k, codec: codec})
	return newDataSet[T](env, n)
}

// sortOp is the operator of Sort and SortPartition: it sorts its task's input.
type sortOp[T any] struct {
	stateless
	env   *Env
	n     *node
	where string
	k     *keyer[T]
	codec *memory.Codec[T]
}

func (o *sortOp[T]) run(tc *task, c collector[T]) error {
	if il := o.n.planned.Decision.InputLocal; len(il) > 0 && il[0] == optimizer.LocalNone {
		// the planner found the input sorted on the key (declared with SortedOn)
		o.n.variants.ran(sortedInput)
		return flow.Pump[T](tc.TaskContext, 0, &sortedPass[T]{key: o.k.Appender(), next: c})
	}
	it, err := sortInput(tc, o.where, o.k, o.codec)
	if err != nil {
		return err
	}
	if o.k.FromRaw != nil {
		o.n.variants.ran(selfKey)
		return emitRaw(tc, it, o.k.FromRaw, c, o.env.opts.BatchSize)
	}
	return emitDecoded(tc, it, o.codec, c, o.env.opts.BatchSize)
}

// sortedPass is the collector of a Sort whose input arrives sorted on its
// key: it passes every batch on as it comes, checking the order, and fails
// with sortjoin.ErrUnsortedInput at the first key below the one before it (a
// wrong SortedOn) rather than emit the records out of order.
type sortedPass[T any] struct {
	flow.Plain
	key       func(dst []byte, v *T) []byte
	prev, cur []byte
	seen      bool
	next      collector[T]
}

func (p *sortedPass[T]) Collect(b []T) error {
	for i := range b {
		p.cur = p.key(p.cur[:0], &b[i])
		if p.seen && bytes.Compare(p.cur, p.prev) < 0 {
			return fmt.Errorf("%w: key %x after %x", sortjoin.ErrUnsortedInput, p.cur, p.prev)
		}
		p.prev, p.cur, p.seen = p.cur, p.prev, true
	}
	return p.next.Collect(b)
}

func (p *sortedPass[T]) End() error { return p.next.End() }

// newSorter returns a Sorter for one of the task's operators: its spilled bytes
// count in the task's metrics and it is closed when the task's body returns.
func (t *task) newSorter(name string) *sortjoin.Sorter {
	s := sortjoin.NewSorter(t.Env, sortjoin.SortOptions{Name: name, Async: true, Memory: t.memShare})
	t.OnExit(func() {
		t.Metrics.AddSpilled(s.Stats().SpilledBytes)
		s.Close()
	})
	return s
}

// sortInput sorts the task's input 0 (records of T) by the key k encodes and
// returns the sorted (key, serialized record) pairs; the task's exit closes them.
func sortInput[T any](tc *task, where string, k *keyer[T], codec *memory.Codec[T]) (sortjoin.Iterator, error) {
	s := tc.inputSorter(where)
	if err := flow.Pump[T](tc.TaskContext, 0, flow.CollectFunc[T]((&typed.SortFeeder[T]{K: k, Codec: codec, S: s}).Collect)); err != nil {
		return nil, err
	}
	return tc.finishSort(s)
}

// inputSorter returns the Sorter of the task's input for the operator at where.
func (t *task) inputSorter(where string) *sortjoin.Sorter {
	return t.newSorter(fmt.Sprintf("%s %d", where, t.Subtask))
}

// finishSort finishes s and returns its sorted pairs; the task's exit closes them.
func (t *task) finishSort(s *sortjoin.Sorter) (sortjoin.Iterator, error) {
	it, err := s.Finish(t.Context())
	if err != nil {
		return nil, err
	}
	t.OnExit(func() { it.Close() })
	return it, nil
}

// ReduceGroup gives every group to fn, which emits any number of results. The
// group's records arrive through vals, valid only during the call, in the order
// SortGroup set (else in no particular order); key is the group's key.
func ReduceGroup[T, K, O any](g *Grouping[T, K], fn func(key K, vals iter.Seq[T], emit func(O))) *DataSet[O] {
	return groupReduce(g, fn, true, "ReduceGroup at "+caller(1))
}

// CombineGroup is ReduceGroup without the shuffle: fn sees the groups of each
// subtask's partition, which may be parts of the full groups (Flink's
// combineGroup); it shrinks data before a ReduceGroup or Reduce.
func CombineGroup[T, K, O any](g *Grouping[T, K], fn func(key K, vals iter.Seq[T], emit func(O))) *DataSet[O] {
	return groupReduce(g, fn, false, "CombineGroup at "+caller(1))
}

// GroupFirst keeps the first n records of every group, in SortGroup's order
// (Flink's first-n per group).
func GroupFirst[T, K any](g *Grouping[T, K], n int) *DataSet[T] {
	out := groupReduce(g, func(_ K, vals iter.Seq[T], emit func(T)) {
		i := 0
		for v := range vals {
			if i >= n {
				return
			}
			emit(v)
			i++
		}
	}, true, "GroupFirst at "+caller(1))
	out.n.opt.PreservesAll = true // it emits input records
	return out
}

// SortGroup orders the records within each group by sel, for ReduceGroup,
// CombineGroup and GroupFirst. Calls chain: the first is the most significant.
func SortGroup[T, K, S any](g *Grouping[T, K], sel func(T) S, o Order) *Grouping[T, K] {
	k, err := typed.NewOrderedKeyer[T, S](sel, o)
	if err != nil {
		g.ds.env.fail("SortGroup at "+caller(1), err)
		return g
	}
	out := *g
	out.sorts = append(slices.Clip(g.sorts), k)
	return &out
}

func groupReduce[T, K, O any](g *Grouping[T, K], fn func(key K, vals iter.Seq[T], emit func(O)), keyed bool, where string) *DataSet[O] {
	env := g.ds.env
	n := env.newNode(optimizer.GroupReduce, where, g.ds.n)
	n.opt.Keyed[0] = keyed
	n.opt.KeyTypes[0] = typeName[K]()
	if g.keys != nil {
		n.setKeys(g.keys)
	}
	if !keyed {
		n.opt.Kind = optimizer.MapPartition
		n.opt.Parallelism = g.ds.n.opt.Parallelism
	}
	k, err := typed.NewKeyer[T, K](g.sel)
	if err != nil {
		env.fail(where, err)
		return newDataSet[O](env, n)
	}
	codec, err := memory.NewCodec[T]()
	if err != nil {
		env.fail(where, err)
		return newDataSet[O](env, n)
	}
	connectInput[T](n, 0, k)
	// the sort key: the group key, then the SortGroup keys
	sortKey := &keyer[T]{Append: func(dst []byte, v *T) []byte {
		dst = k.Append(dst, v)
		for _, s := range g.sorts {
			dst = s.Append(dst, v)
		}
		return dst
	}}
	n.op = pulls[O](&groupReduceOp[T, K, O]{env: env, n: n, g: g, fn: fn, keyed: keyed, where: where, k: k, codec: codec, sortKey: sortKey})
	return newDataSet[O](env, n)
}

// groupReduceOp is GroupReduce's operator: it groups its task's input by
// sorting it (or by a counting sort over dense keys).
type groupReduceOp[T, K, O any] struct {
	stateless
	env     *Env
	n       *node
	g       *Grouping[T, K]
	fn      func(key K, vals iter.Seq[T], emit func(O))
	keyed   bool
	where   string
	k       *keyer[T]
	codec   *memory.Codec[T]
	sortKey *keyer[T] // the group key, then the SortGroup keys
}

func (o *groupReduceOp[T, K, O]) run(tc *task, c collector[O]) error {
	e := &flow.Emitter[O]{Next: c, Batch: o.env.opts.BatchSize}
	fn := func(k K, vals iter.Seq[T]) error { o.fn(k, vals, e.Emit); return e.Err }
	var it sortjoin.Iterator
	var err error
	if o.keyed && len(o.g.sorts) == 0 && o.k.Word != nil && o.codec.Flat() {
		feeder := &typed.SortFeeder[T]{K: o.sortKey, Codec: o.codec}
		res := tc.Env.Memory.NewReservation(o.where + " dense grouping")
		tc.OnExit(func() { _ = res.Release() })
		d := typed.NewDenseGrouper(o.k.Word, res, tc.memShare, func() func([]T) error {
			feeder.S = tc.inputSorter(o.where)
			return feeder.Collect
		})
		if err := flow.Pump[T](tc.TaskContext, 0, flow.CollectFunc[T](d.Add)); err != nil {
			return err
		}
		grouped, err := d.Group()
		if err != nil {
			return err
		}
		if grouped {
			o.n.variants.ran(countingSort)
			if err := typed.ReduceDense(tc.Context(), d, o.g.sel, fn); err != nil {
				return err
			}
			return e.End()
		}
		o.n.variants.ran(sorter)
		if it, err = tc.finishSort(feeder.S); err != nil {
			return err
		}
	} else {
		o.n.variants.ran(sorter)
		if it, err = sortInput(tc, o.where, o.sortKey, o.codec); err != nil {
			return err
		}
	}
	if err := typed.ReduceSorted(tc.Context(), it, o.k, o.codec, o.g.sel, fn); err != nil {
		return err
	}
	return e.End()
}
