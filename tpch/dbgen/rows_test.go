package dbgen

import (
	"iter"
	"reflect"
	"testing"
)

// collect2 copies the rows of a two-level iterator.
func collect2[A, B any](seq iter.Seq2[*A, []B]) (as []A, bs [][]B) {
	for a, b := range seq {
		as = append(as, *a)
		bs = append(bs, append([]B(nil), b...))
	}
	return as, bs
}

func collect[A any](seq iter.Seq[*A]) (as []A) {
	for a := range seq {
		as = append(as, *a)
	}
	return as
}

// TestRangesEqualSequential checks that generating rows [from, to) (which
// skips the streams by from rows at once) gives the rows a sequential run
// makes at those positions.
func TestRangesEqualSequential(t *testing.T) {
	sc, err := NewScale(0.01)
	if err != nil {
		t.Fatal(err)
	}
	ranges := [][2]int64{{0, 1}, {1, 2}, {17, 400}, {999, 1000}, {1234, 1500}}
	allO, allL := collect2(Orders(sc, 0, 1500))
	allP, allPS := collect2(Parts(sc, 0, 1500))
	allC := collect(Customers(sc, 0, 1500))
	allS := collect(Suppliers(sc, 0, 100))
	for _, r := range ranges {
		o, l := collect2(Orders(sc, r[0], r[1]))
		if !reflect.DeepEqual(o, allO[r[0]:r[1]]) || !reflect.DeepEqual(l, allL[r[0]:r[1]]) {
			t.Errorf("orders %v differ from the sequential run", r)
		}
		p, ps := collect2(Parts(sc, r[0], r[1]))
		if !reflect.DeepEqual(p, allP[r[0]:r[1]]) || !reflect.DeepEqual(ps, allPS[r[0]:r[1]]) {
			t.Errorf("parts %v differ from the sequential run", r)
		}
		if c := collect(Customers(sc, r[0], r[1])); !reflect.DeepEqual(c, allC[r[0]:r[1]]) {
			t.Errorf("customers %v differ from the sequential run", r)
		}
		if r[1] <= 100 {
			if s := collect(Suppliers(sc, r[0], r[1])); !reflect.DeepEqual(s, allS[r[0]:r[1]]) {
				t.Errorf("suppliers %v differ from the sequential run", r)
			}
		}
	}
	// early break stops the iteration
	n := 0
	for range Orders(sc, 0, 100) {
		if n++; n == 3 {
			break
		}
	}
	if n != 3 {
		t.Errorf("iterated %d orders after break", n)
	}
}

// TestOrderInvariants checks what the spec says of every order: status and
// total price from its lines, dates in order.
func TestOrderInvariants(t *testing.T) {
	sc, _ := NewScale(0.01)
	for o, ls := range Orders(sc, 0, 3000) {
		var total int64
		filled := 0
		for _, l := range ls {
			total += l.ExtendedPrice * (100 - l.Discount) / 100 * (100 + l.Tax) / 100
			if l.LineStatus == "F" {
				filled++
			}
			if l.ShipDate <= o.OrderDate || l.ReceiptDate <= l.ShipDate || l.CommitDate < o.OrderDate+30 {
				t.Fatalf("order %d line %d: dates %d %d %d %d", o.OrderKey, l.LineNumber, o.OrderDate, l.ShipDate, l.CommitDate, l.ReceiptDate)
			}
			if l.ExtendedPrice != retailPrice(l.PartKey)*l.Quantity/100 {
				t.Fatalf("order %d line %d: extended price %d", o.OrderKey, l.LineNumber, l.ExtendedPrice)
			}
		}
		want := map[bool]string{true: "F", false: "P"}[filled == len(ls)]
		if filled == 0 {
			want = "O"
		}
		if o.TotalPrice != total || o.OrderStatus != want || o.CustKey%3 == 0 {
			t.Fatalf("order %d: total %d status %s custkey %d; lines give %d %s", o.OrderKey, o.TotalPrice, o.OrderStatus, o.CustKey, total, want)
		}
	}
}
