package parquet

import (
	"math/big"
	"math/rand/v2"
	"testing"
	"time"
)

// TestDecimalAddSub: Add and Sub, at equal scales (the inlined path) and
// unequal ones, against exact rationals; the result's scale is the larger.
func TestDecimalAddSub(t *testing.T) {
	rat := func(d Decimal) *big.Rat {
		return new(big.Rat).SetFrac(big.NewInt(d.Unscaled), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		a := NewDecimal(r.Int64N(2_000_000)-1_000_000, r.Int32N(5))
		b := NewDecimal(r.Int64N(2_000_000)-1_000_000, r.Int32N(5))
		sum, diff := a.Add(b), a.Sub(b)
		if sum.Scale != max(a.Scale, b.Scale) || diff.Scale != sum.Scale {
			t.Fatalf("%v, %v: scales %d, %d", a, b, sum.Scale, diff.Scale)
		}
		if rat(sum).Cmp(new(big.Rat).Add(rat(a), rat(b))) != 0 {
			t.Fatalf("%v + %v = %v", a, b, sum)
		}
		if rat(diff).Cmp(new(big.Rat).Sub(rat(a), rat(b))) != 0 {
			t.Fatalf("%v - %v = %v", a, b, diff)
		}
	}
}

func TestDecimal(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Decimal
		out  string
	}{
		{"17.00", Decimal{1700, 2}, "17.00"},
		{"-0.05", Decimal{-5, 2}, "-0.05"},
		{"-12.5", Decimal{-125, 1}, "-12.5"},
		{"42", Decimal{42, 0}, "42"},
		{"0.000001", Decimal{1, 6}, "0.000001"},
	} {
		d, err := ParseDecimal(c.in)
		if err != nil || d != c.want || d.String() != c.out {
			t.Errorf("%q: %+v %q %v", c.in, d, d.String(), err)
		}
	}
	for _, bad := range []string{"", "x", "1.2.3", "1.0000000000000000000"} {
		if _, err := ParseDecimal(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	a, b := NewDecimal(2471035, 2), NewDecimal(4, 2) // 24710.35, 0.04
	one := NewDecimal(1, 0)
	if got := a.Mul(one.Sub(b)); got.String() != "23721.9360" {
		t.Errorf("price*(1-disc) = %v", got)
	}
	if got := a.Add(b); got != (Decimal{2471039, 2}) {
		t.Errorf("add %v", got)
	}
	if a.Cmp(b) != 1 || b.Cmp(a) != -1 || NewDecimal(10, 1).Cmp(NewDecimal(1, 0)) != 0 {
		t.Error("cmp")
	}
	if NewDecimal(1700, 2).Float64() != 17 || NewDecimal(7, 2).Float64() != 0.07 {
		t.Error("float64")
	}
	if NewDecimal(123456, 3).Rescale(1) != (Decimal{1234, 1}) || NewDecimal(5, 0).Rescale(2) != (Decimal{500, 2}) {
		t.Error("rescale")
	}
	if NewDecimal(5, -2).String() != "500" {
		t.Errorf("negative scale %v", NewDecimal(5, -2))
	}
}

func TestDate(t *testing.T) {
	for _, c := range []struct {
		s string
		d Date
	}{{"1970-01-01", 0}, {"1969-12-31", -1}, {"1998-09-02", 10471}, {"1900-03-01", -25508}} {
		d, err := ParseDate(c.s)
		if err != nil || d != c.d || d.String() != c.s {
			t.Errorf("%s: %d %v %v", c.s, d, d, err)
		}
		if !d.Time().Equal(time.Date(d.Time().Year(), d.Time().Month(), d.Time().Day(), 0, 0, 0, 0, time.UTC)) {
			t.Errorf("%s: not midnight UTC", c.s)
		}
	}
	// DateOf takes the day in t's own location.
	loc := time.FixedZone("east", 10*3600)
	if d := DateOf(time.Date(1994, 1, 1, 3, 0, 0, 0, loc)); d != MakeDate(1994, 1, 1) {
		t.Errorf("DateOf %v", d)
	}
	if _, err := ParseDate("1994-13-01"); err == nil {
		t.Error("bad date accepted")
	}
}
