package dataset

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/weirdata/weir/optimizer"
)

// On names the logical fields of the key of the operator that produced ds, in
// key order, for every input that operator keys: both inputs of a join or
// CoGroup (joining orders and lineitem on "orderkey" names both sides
// "orderkey"), the input of a Reduce, Aggregate, Distinct, ReduceGroup,
// CombineGroup or GroupFirst, of a Sort or SortPartition and of
// PartitionByHash and PartitionByRange. SortBy and SortPartitionBy take one
// name per By part.
//
// Equal names mean equal values: the optimizer takes data partitioned on
// "orderkey" by one operator to be partitioned on "orderkey" for the next, so
// a name must stand for the same logical field wherever it is used. The key
// is a function, so weir cannot check the names against it: give exactly one
// name per field of the key (one for a scalar key, one per field of a struct
// key, in field order). Call On right after creating ds; a Grouping's key can
// be named before the reduction with Grouping.On instead. On changes ds
// itself and returns it: a := ds.On("k") names ds's key too.
func (ds *DataSet[T]) On(fields ...string) *DataSet[T] {
	ds.env.on(ds.n, fields)
	return ds
}

// on is On's body, untyped: compiled once, not once per record type.
func (env *Env) on(n *node, fields []string) {
	where := "On at " + caller(2)
	if err := checkFields(fields, false); err != nil {
		env.fail(where, err)
		return
	}
	keyed := false
	for _, t := range n.opt.KeyTypes {
		keyed = keyed || t != ""
	}
	if !keyed {
		env.fail(where, fmt.Errorf("%s has no key to name", n.name()))
		return
	}
	if len(n.desc) > 1 && len(fields) != len(n.desc) {
		env.fail(where, fmt.Errorf("%s has %d key parts: name one field per part, not %d", n.name(), len(n.desc), len(fields)))
		return
	}
	n.setKeys(fields)
}

// setKeys sets the key names of every keyed input of n.
func (n *node) setKeys(fields []string) {
	n.opt.Keys = make([][]string, len(n.inputs))
	for i, t := range n.opt.KeyTypes {
		if t != "" {
			n.opt.Keys[i] = slices.Clone(fields)
		}
	}
}

// On names the logical fields of the grouping's key, in key order (see
// DataSet.On); the reduction that follows (Reduce, Aggregate, ReduceGroup,
// CombineGroup, GroupFirst) carries the names. It changes g itself and
// returns it.
func (g *Grouping[T, K]) On(fields ...string) *Grouping[T, K] {
	if err := checkFields(fields, false); err != nil {
		g.ds.env.fail("On at "+caller(1), err)
		return g
	}
	out := *g
	out.keys = slices.Clone(fields)
	return &out
}

// Forwards declares that the operator that produced ds passes these logical
// fields unchanged from its input (every input, for a join) to its output, as
// Flink's withForwardedFields does: "f" keeps the name, "f->g" renames it. A
// join whose function copies o.OrderKey into its result forwards "orderkey",
// so data partitioned on orderkey before the join stays so after it. The
// optimizer uses only the names an input has (named by On upstream); it cannot
// check that the function really copies the fields, so a wrong declaration
// gives wrong results. Forwards changes ds itself and returns it: a :=
// ds.Forwards("f") declares the fields for ds too.
func (ds *DataSet[T]) Forwards(fields ...string) *DataSet[T] {
	ds.env.forwards(ds.n, fields)
	return ds
}

// forwards is Forwards's body, untyped: compiled once, not once per record type.
func (env *Env) forwards(n *node, fields []string) {
	where := "Forwards at " + caller(2)
	if err := checkFields(fields, true); err != nil {
		env.fail(where, err)
		return
	}
	if len(n.inputs) == 0 {
		env.fail(where, fmt.Errorf("%s has no input to forward fields from", n.name()))
		return
	}
	n.forwards = append(n.forwards, fields...)
}

// SortedOn declares that every subtask of the operator that produced ds
// emits its records sorted on these logical fields (named as On names them),
// in key order, by the fields' values in their natural order (numbers by
// value, strings by their bytes), ascending or descending as o says, as
// Flink's splitsOrderedBy declares a source's order. A Sort or SortPartition
// on exactly these fields (named with On) whose input arrives forwarded then
// sorts nothing; the order survives the operators that forward the fields
// (Forwards) or pass records through. The optimizer cannot check the
// declaration; a Sort that relies on it checks the order as records pass and
// fails the job (sortjoin.ErrUnsortedInput) on a record out of order. A Sort
// of the whole data set relies on it only at parallelism 1, where one subtask
// holds every key. SortedOn changes ds itself and returns it.
func (ds *DataSet[T]) SortedOn(o Order, fields ...string) *DataSet[T] {
	ds.env.sortedOn(ds.n, o, fields)
	return ds
}

// sortedOn is SortedOn's body, untyped: compiled once, not once per record type.
func (env *Env) sortedOn(n *node, o Order, fields []string) {
	if err := checkFields(fields, false); err != nil {
		env.fail("SortedOn at "+caller(2), err)
		return
	}
	n.opt.Sorted = slices.Clone(fields)
	n.opt.SortedDesc = make([]bool, len(fields))
	for i := range fields {
		n.opt.SortedDesc[i] = o == Descending
	}
}

// WithEstimate declares the number of records the operator that produced ds
// emits, for the optimizer (it replaces a source's statistics). It changes ds
// itself and returns it: a := ds.WithEstimate(10) changes ds too.
func (ds *DataSet[T]) WithEstimate(rows int64) *DataSet[T] {
	ds.env.withEstimate(ds.n, rows)
	return ds
}

// withEstimate is WithEstimate's body, untyped: compiled once, not once per record type.
func (env *Env) withEstimate(n *node, rows int64) {
	if rows < 0 {
		env.fail("WithEstimate at "+caller(2), fmt.Errorf("%d rows: want at least 0", rows))
		return
	}
	n.opt.EstimatedRows = rows
}

// WithSelectivity declares how many records the operator that produced ds
// emits per input record (0.1 for a filter that keeps a tenth, 3 for a flatMap
// that emits three), for the optimizer's estimates. It changes ds itself and
// returns it: a := ds.WithSelectivity(0.1) changes ds too.
func (ds *DataSet[T]) WithSelectivity(f float64) *DataSet[T] {
	ds.env.withSelectivity(ds.n, f)
	return ds
}

// withSelectivity is WithSelectivity's body, untyped: compiled once, not once per record type.
func (env *Env) withSelectivity(n *node, f float64) {
	where := "WithSelectivity at " + caller(2)
	switch {
	case len(n.inputs) == 0:
		env.fail(where, fmt.Errorf("%s has no input: declare its size with WithEstimate", n.name()))
	case math.IsNaN(f) || math.IsInf(f, 0) || f < 0:
		env.fail(where, fmt.Errorf("selectivity %v: want a finite number of at least 0", f))
	default:
		n.opt.Selectivity = f
	}
}

// checkFields checks annotation field names: at least one, none empty, and
// "f->g" renames only where allowed.
func checkFields(fields []string, renames bool) error {
	if len(fields) == 0 {
		return fmt.Errorf("no fields named")
	}
	for _, f := range fields {
		parts := []string{f}
		if renames {
			if from, to, ok := strings.Cut(f, "->"); ok {
				parts = []string{from, to}
			}
		}
		for _, p := range parts {
			if strings.TrimSpace(p) == "" || strings.Contains(p, "->") {
				return fmt.Errorf("bad field name %q", f)
			}
		}
	}
	return nil
}

// typeName is the name of K as the optimizer's KeyTypes hold it.
func typeName[K any]() string { return reflect.TypeFor[K]().String() }

// varBytes is the guess for the out-of-line bytes of each string, slice,
// map, pointer or interface a record holds.
const varBytes = 16

// rowBytes estimates the in-memory size of a T: its static size plus a guess
// for what its variable parts point to.
func rowBytes[T any]() int64 {
	t := reflect.TypeFor[T]()
	return int64(t.Size()) + variableBytes(t)
}

func variableBytes(t reflect.Type) int64 {
	switch t.Kind() {
	case reflect.String, reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface:
		return varBytes
	case reflect.Array:
		return int64(t.Len()) * variableBytes(t.Elem())
	case reflect.Struct:
		var n int64
		for i := range t.NumField() {
			n += variableBytes(t.Field(i).Type)
		}
		return n
	}
	return 0
}

// clonePlan copies p, so that what Env.Plan and Execute hand out is the
// caller's to keep: a later planning of the program does not change it.
func clonePlan(p *optimizer.Plan) *optimizer.Plan {
	out := &optimizer.Plan{Memory: p.Memory, Nodes: make([]*optimizer.Node, len(p.Nodes))}
	copies := make(map[*optimizer.Node]*optimizer.Node, len(p.Nodes))
	for i, n := range p.Nodes {
		c := *n
		c.Inputs = make([]*optimizer.Node, len(n.Inputs))
		for j, in := range n.Inputs {
			c.Inputs[j] = copies[in]
		}
		c.Keyed, c.Ordered = slices.Clone(n.Keyed), slices.Clone(n.Ordered)
		c.KeyTypes, c.Descending = slices.Clone(n.KeyTypes), slices.Clone(n.Descending)
		c.Static = slices.Clone(n.Static)
		if s, ok := copies[n.SizeOf]; ok { // SizeOf comes before n in the plan
			c.SizeOf = s
		}
		c.Keys, c.Forwards = cloneNames(n.Keys), cloneNames(n.Forwards)
		c.Sorted, c.SortedDesc = slices.Clone(n.Sorted), slices.Clone(n.SortedDesc)
		if n.Forced != nil {
			c.Forced = make(map[int]optimizer.Ship, len(n.Forced))
			for k, v := range n.Forced {
				c.Forced[k] = v
			}
		}
		c.Decision = cloneDecision(n.Decision)
		if n.Actual != nil {
			a := *n.Actual
			c.Actual = &a
		}
		copies[n] = &c
		out.Nodes[i] = &c
	}
	return out
}

func cloneNames(x [][]string) [][]string {
	if x == nil {
		return nil
	}
	out := make([][]string, len(x))
	for i := range x {
		out[i] = slices.Clone(x[i])
	}
	return out
}
