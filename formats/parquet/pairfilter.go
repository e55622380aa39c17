package parquet

import (
	"bytes"
	"fmt"
)

// pairSpec is a comparison of two columns as declared (WhereColumns).
type pairSpec struct {
	left, right string
	op          Op
}

// WhereColumns declares a filter that compares two columns of a row: only
// rows whose left column satisfies op (Eq, Lt, Le, Gt or Ge) against the
// right column's value in the same row are passed to Read's callback
// (TPC-H's l_commitdate < l_receiptdate). The columns must hold the same
// type: integers of one kind, DECIMALs of one scale, DATEs, TIMESTAMPs of
// one unit, floats, or byte arrays (compared bytewise). Neither need be a
// field of T. NULL on either side never satisfies it. It runs after the
// Where filters, on the rows they kept, and decodes the other columns only
// for the rows it keeps.
func WhereColumns(left string, op Op, right string) Option {
	return func(o *options) {
		o.pairs = append(o.pairs, pairSpec{left: left, op: op, right: right})
	}
}

// pairFilter is a WhereColumns filter compiled against one file's columns.
type pairFilter struct {
	left, right int // indexes among the reader's columns
	op          Op
	vec         vecKind
}

// compilePair checks that spec's columns, described by l and r, compare.
func compilePair(spec pairSpec, l, r *colDesc, left, right int) (*pairFilter, error) {
	switch spec.op {
	case Eq, Lt, Le, Gt, Ge:
	default:
		return nil, fmt.Errorf("filter %s %v %s: WhereColumns takes =, <, <=, > or >=", spec.left, spec.op, spec.right)
	}
	same := l.vec == r.vec
	if same && l.vec == vecInts {
		same = l.decimal == r.decimal && l.scale == r.scale && l.date == r.date && l.tsUnit == r.tsUnit &&
			l.unsigned == r.unsigned && (l.phys == boolKind) == (r.phys == boolKind)
		if l.unsigned && (l.phys == int64Kind || r.phys == int64Kind) {
			return nil, fmt.Errorf("filter %s %v %s: filters on unsigned 64-bit columns are not supported", spec.left, spec.op, spec.right)
		}
	}
	if !same {
		return nil, fmt.Errorf("filter %s %v %s: the columns hold different types", spec.left, spec.op, spec.right)
	}
	return &pairFilter{left: left, right: right, op: spec.op, vec: l.vec}, nil
}

// apply keeps in sel the rows of l and r (the two columns' vectors) that
// pass, in place, and returns it.
func (p *pairFilter) apply(l, r *vector, sel []int32) []int32 {
	switch p.vec {
	case vecInts:
		return comparePairs(p.op, l.ints, r.ints, l, r, sel)
	case vecFloats:
		return comparePairs(p.op, l.floats, r.floats, l, r, sel)
	}
	out := sel[:0]
	for _, x := range sel {
		if (l.nulls && !l.valid[x]) || (r.nulls && !r.valid[x]) {
			continue
		}
		if holds(p.op, bytes.Compare(l.refs[x], r.refs[x])) {
			out = append(out, x)
		}
	}
	return out
}

// comparePairs keeps the rows of sel whose a op b, in place, and returns it.
// Floats compare as Go compares them: NaN satisfies no op.
func comparePairs[V int64 | float64](op Op, a, b []V, l, r *vector, sel []int32) []int32 {
	n := 0
	if !l.nulls && !r.nulls && op == Lt { // the common case: no branch on the result
		for _, x := range sel {
			sel[n] = x
			k := 0
			if a[x] < b[x] {
				k = 1
			}
			n += k
		}
		return sel[:n]
	}
	for _, x := range sel {
		if (l.nulls && !l.valid[x]) || (r.nulls && !r.valid[x]) {
			continue
		}
		var ok bool
		switch u, v := a[x], b[x]; op {
		case Eq:
			ok = u == v
		case Lt:
			ok = u < v
		case Le:
			ok = u <= v
		case Gt:
			ok = u > v
		default:
			ok = u >= v
		}
		if ok {
			sel[n] = x
			n++
		}
	}
	return sel[:n]
}

// holds reports whether a comparison's result c satisfies op.
func holds(op Op, c int) bool {
	switch op {
	case Eq:
		return c == 0
	case Lt:
		return c < 0
	case Le:
		return c <= 0
	case Gt:
		return c > 0
	}
	return c >= 0
}
