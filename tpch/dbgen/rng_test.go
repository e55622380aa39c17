package dbgen

import "testing"

func TestNthElement(t *testing.T) {
	for _, seed := range []int64{1, 933588178, pmModulus - 1} {
		x := seed
		for n := int64(0); n <= 300; n++ {
			if got := nthElement(n, seed); got != x {
				t.Fatalf("nthElement(%d, %d) = %d, want %d", n, seed, got, x)
			}
			x = nextRand(x)
		}
	}
}

func TestRandomRange(t *testing.T) {
	st := newStreams(tCustomer)
	seen := map[int64]bool{}
	for range 10000 {
		v := st.random(sCNtrg, -3, 3)
		if v < -3 || v > 3 {
			t.Fatalf("random(-3, 3) = %d", v)
		}
		seen[v] = true
	}
	if len(seen) != 7 {
		t.Errorf("random(-3, 3) drew %d distinct values, want 7", len(seen))
	}
}

func TestNewScale(t *testing.T) {
	for _, c := range []struct {
		sf                                 float64
		part, supp, cust, orders, partsupp int64
	}{
		{0.01, 2000, 100, 1500, 15000, 8000},
		{0.1, 20000, 1000, 15000, 150000, 80000},
		{0.25, 50000, 2500, 37500, 375000, 200000},
		{1, 200000, 10000, 150000, 1500000, 800000},
		{1.9, 200000, 10000, 150000, 1500000, 800000},
		{10, 2000000, 100000, 1500000, 15000000, 8000000},
		{0.0001, 1, 1, 1, 1, 4},
	} {
		sc, err := NewScale(c.sf)
		if err != nil {
			t.Fatalf("NewScale(%v): %v", c.sf, err)
		}
		got := []int64{sc.Rows("part"), sc.Rows("supplier"), sc.Rows("customer"), sc.Rows("orders"), sc.Rows("partsupp")}
		want := []int64{c.part, c.supp, c.cust, c.orders, c.partsupp}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("sf %v: rows %v, want %v", c.sf, got, want)
				break
			}
		}
	}
	for _, sf := range []float64{0, -1, 30000, 1e9} {
		if _, err := NewScale(sf); err == nil {
			t.Errorf("NewScale(%v) succeeded", sf)
		}
	}
}

func TestKeyFormulas(t *testing.T) {
	var keys []int64
	for i := int64(1); i <= 10; i++ {
		keys = append(keys, orderKey(i))
	}
	want := []int64{1, 2, 3, 4, 5, 6, 7, 32, 33, 34}
	for i := range want {
		if keys[i] != want[i] {
			t.Fatalf("order keys %v, want %v", keys, want)
		}
	}
	// the four suppliers of a part are spread a quarter of the suppliers apart
	for i, w := range []int64{2, 27, 52, 77} {
		if got := partSupp(1, int64(i), 100); got != w {
			t.Errorf("partSupp(1, %d, 100) = %d, want %d", i, got, w)
		}
	}
	for p, w := range map[int64]int64{1: 90100, 1000: 90100, 20010: 93001, 199999: 209899} {
		if got := retailPrice(p); got != w {
			t.Errorf("retailPrice(%d) = %d, want %d", p, got, w)
		}
	}
}
