package dbgen

import "iter"

// The row-level API. Each function generates the rows [from, to) of a table
// (0-based row numbers; key = row+1 except o_orderkey, which is sparse) and
// yields them by pointer: a yielded row is valid until the next iteration,
// its strings for as long as they are referenced. Starting at from costs no
// more than starting at 0: the streams are advanced by from rows at once.

// Customers yields customer rows [from, to).
func Customers(sc Scale, from, to int64) iter.Seq[*Customer] {
	return func(yield func(*Customer) bool) {
		g := newCustomerGen(from)
		var c Customer
		for i := from; i < to; i++ {
			g.next(i+1, &c)
			if !yield(&c) {
				return
			}
		}
	}
}

// Suppliers yields supplier rows [from, to).
func Suppliers(sc Scale, from, to int64) iter.Seq[*Supplier] {
	return func(yield func(*Supplier) bool) {
		g := newSupplierGen(from)
		var s Supplier
		for i := from; i < to; i++ {
			g.next(i+1, &s)
			if !yield(&s) {
				return
			}
		}
	}
}

// Parts yields part rows [from, to), each with its four partsupp rows.
func Parts(sc Scale, from, to int64) iter.Seq2[*Part, []PartSupp] {
	return func(yield func(*Part, []PartSupp) bool) {
		g := newPartGen(sc, from)
		var p Part
		var ps [suppPerPart]PartSupp
		for i := from; i < to; i++ {
			g.next(i+1, &p, &ps)
			if !yield(&p, ps[:]) {
				return
			}
		}
	}
}

// Orders yields order rows [from, to), each with its lineitem rows.
func Orders(sc Scale, from, to int64) iter.Seq2[*Order, []Lineitem] {
	return func(yield func(*Order, []Lineitem) bool) {
		g := newOrderGen(sc, from)
		var o Order
		var ls [maxLines]Lineitem
		for i := from; i < to; i++ {
			n := g.next(i+1, &o, &ls)
			if !yield(&o, ls[:n]) {
				return
			}
		}
	}
}
