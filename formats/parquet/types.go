package parquet

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Date is a calendar day: the number of days since 1970-01-01 (negative
// before). It is what a Parquet DATE column stores, so reading one is a copy,
// and two Dates compare with < and ==.
type Date int32

// DateOf returns the day of t in t's location.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	u := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	return Date(floorDiv(u.Unix(), 86400))
}

// MakeDate returns the Date of year-month-day.
func MakeDate(year int, month time.Month, day int) Date {
	return DateOf(time.Date(year, month, day, 0, 0, 0, 0, time.UTC))
}

// ParseDate parses "YYYY-MM-DD".
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return 0, fmt.Errorf("formats/parquet: parse date %q: %w", s, err)
	}
	return DateOf(t), nil
}

// Time returns midnight UTC of d.
func (d Date) Time() time.Time { return time.Unix(int64(d)*86400, 0).UTC() }

// String formats d as "YYYY-MM-DD".
func (d Date) String() string { return d.Time().Format(time.DateOnly) }

// Decimal is an exact fixed-point number: Unscaled × 10^-Scale. A Parquet
// DECIMAL column stored as INT32 or INT64 reads into it without rounding
// (DECIMAL(15,2) 17.00 reads as {1700, 2}).
//
// Why this shape: TPC-H money is DECIMAL(15,2), and its expressions
// (price × (1 − discount) × (1 + tax)) only multiply and add, so carrying the
// scale with the value keeps every step exact — Mul adds scales, Add aligns
// them — while staying a 16-byte value type with no allocation. The price is
// range: Unscaled is an int64, so a value must fit 18 digits at its scale.
// Arithmetic that leaves that range is not detected (it wraps like int64);
// at scale 6 sums up to ±9.2e12 are exact, which covers TPC-H Q1's
// sum_charge up to SF 100. Use float64 fields where range matters more than
// exactness.
type Decimal struct {
	Unscaled int64
	Scale    int32
}

// pow10 holds 10^0 .. 10^18.
var pow10 = func() [19]int64 {
	var p [19]int64
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// NewDecimal returns unscaled × 10^-scale.
func NewDecimal(unscaled int64, scale int32) Decimal {
	return Decimal{Unscaled: unscaled, Scale: scale}
}

// ParseDecimal parses a decimal literal such as "-12.50"; its scale is the
// number of digits after the point.
func ParseDecimal(s string) (Decimal, error) {
	i, frac := s, ""
	for k := 0; k < len(s); k++ {
		if s[k] == '.' {
			i, frac = s[:k], s[k+1:]
			break
		}
	}
	digits := i + frac
	if len(frac) > 18 {
		return Decimal{}, fmt.Errorf("formats/parquet: parse decimal %q: more than 18 fractional digits", s)
	}
	u, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return Decimal{}, fmt.Errorf("formats/parquet: parse decimal %q: %w", s, err)
	}
	return Decimal{Unscaled: u, Scale: int32(len(frac))}, nil
}

// Rescale returns d at scale s. Increasing the scale is exact; decreasing it
// truncates toward zero.
func (d Decimal) Rescale(s int32) Decimal {
	switch {
	case s == d.Scale:
		return d
	case s > d.Scale:
		return Decimal{Unscaled: d.Unscaled * pow10[s-d.Scale], Scale: s}
	default:
		return Decimal{Unscaled: d.Unscaled / pow10[d.Scale-s], Scale: s}
	}
}

// Add returns d + e at the larger of their scales.
func (d Decimal) Add(e Decimal) Decimal {
	if d.Scale == e.Scale { // the common case, small enough to inline
		return Decimal{Unscaled: d.Unscaled + e.Unscaled, Scale: d.Scale}
	}
	return d.addScaled(e)
}

// Sub returns d − e at the larger of their scales.
func (d Decimal) Sub(e Decimal) Decimal {
	if d.Scale == e.Scale {
		return Decimal{Unscaled: d.Unscaled - e.Unscaled, Scale: d.Scale}
	}
	e.Unscaled = -e.Unscaled
	return d.addScaled(e)
}

// addScaled returns d + e at the larger of their scales.
func (d Decimal) addScaled(e Decimal) Decimal {
	m := max(d.Scale, e.Scale)
	return Decimal{Unscaled: d.Rescale(m).Unscaled + e.Rescale(m).Unscaled, Scale: m}
}

// Mul returns d × e at scale d.Scale + e.Scale.
func (d Decimal) Mul(e Decimal) Decimal {
	return Decimal{Unscaled: d.Unscaled * e.Unscaled, Scale: d.Scale + e.Scale}
}

// Cmp returns -1, 0 or +1 as d is less than, equal to or greater than e.
func (d Decimal) Cmp(e Decimal) int {
	s := max(d.Scale, e.Scale)
	a, b := d.Rescale(s).Unscaled, e.Rescale(s).Unscaled
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Float64 returns the nearest float64 (unscaled / 10^scale, one rounding).
func (d Decimal) Float64() float64 {
	if d.Scale >= 0 && int(d.Scale) < len(pow10) {
		return float64(d.Unscaled) / float64(pow10[d.Scale])
	}
	return float64(d.Unscaled) * math.Pow10(-int(d.Scale))
}

// String formats d with exactly Scale fractional digits: {1700, 2} → "17.00".
func (d Decimal) String() string {
	if d.Scale <= 0 {
		return strconv.FormatInt(d.Unscaled, 10) + zeros(int(-d.Scale))
	}
	neg := d.Unscaled < 0
	u := uint64(d.Unscaled)
	if neg {
		u = -u
	}
	s := strconv.FormatUint(u, 10)
	if len(s) <= int(d.Scale) {
		s = zeros(int(d.Scale)-len(s)+1) + s
	}
	k := len(s) - int(d.Scale)
	s = s[:k] + "." + s[k:]
	if neg {
		s = "-" + s
	}
	return s
}

func zeros(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '0'
	}
	return string(b)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
