package parquet

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"time"
	"unsafe"

	pq "github.com/parquet-go/parquet-go"
)

// filter is a declared filter compiled against one file's column: its
// values converted to the column's stored domain (unscaled DECIMAL integers,
// days, timestamp units, float64 or bytes) so that a batch is filtered
// without converting a single stored value.
type filter struct {
	col   int // index of the column among the reader's columns
	desc  *colDesc
	ints  bounds[int64]
	flts  bounds[float64]
	bytes bounds[string]
	// span: ints is a range (not a set), as the closed interval [lo, hi]
	// that filterSpan tests without a branch per row
	span   bool
	lo, hi int64
}

// bounds is a range, or a set when isSet; empty when nothing can match.
type bounds[V int64 | float64 | string] struct {
	lo, hi       V
	hasLo, hasHi bool
	loInc, hiInc bool
	isSet        bool
	set          []V
	empty        bool
}

func (b *bounds[V]) match(x V) bool {
	if b.isSet {
		return slices.Contains(b.set, x)
	}
	if b.hasLo && (x < b.lo || x == b.lo && !b.loInc) {
		return false
	}
	if b.hasHi && (x > b.hi || x == b.hi && !b.hiInc) {
		return false
	}
	return true
}

// overlaps reports whether some value in [lo, hi] may match.
func (b *bounds[V]) overlaps(lo, hi V) bool {
	if b.empty {
		return false
	}
	if b.isSet {
		for _, x := range b.set {
			if lo <= x && x <= hi {
				return true
			}
		}
		return false
	}
	if b.hasLo && (hi < b.lo || hi == b.lo && !b.loInc) {
		return false
	}
	if b.hasHi && (lo > b.hi || lo == b.hi && !b.hiInc) {
		return false
	}
	return true
}

// filterRows keeps in sel the rows that pass, in place, and returns it.
func filterRows[V int64 | float64](b *bounds[V], vals []V, valid []bool, nulls bool, sel []int32) []int32 {
	out := sel[:0]
	if b.empty {
		return out
	}
	for _, r := range sel {
		if nulls && !valid[r] {
			continue
		}
		if b.match(vals[r]) {
			out = append(out, r)
		}
	}
	return out
}

// closedInts returns the integers b matches as a closed interval [lo, hi],
// and false when b is a set; an empty b is an empty interval (lo > hi).
func closedInts(b *bounds[int64]) (lo, hi int64, ok bool) {
	switch {
	case b.isSet:
		return 0, 0, false
	case b.empty, b.hasLo && !b.loInc && b.lo == math.MaxInt64, b.hasHi && !b.hiInc && b.hi == math.MinInt64:
		return 1, 0, true
	}
	lo, hi = math.MinInt64, math.MaxInt64
	if b.hasLo {
		lo = b.lo
		if !b.loInc {
			lo++
		}
	}
	if b.hasHi {
		hi = b.hi
		if !b.hiInc {
			hi--
		}
	}
	return lo, hi, true
}

// filterSpan keeps in sel the rows whose value lies in [lo, hi], in place,
// and returns it: one unsigned comparison a row, added to the count rather
// than branched on, so that a filter that keeps rows at random costs no
// mispredicted branches. The column has no NULLs.
func filterSpan(lo, hi int64, vals []int64, sel []int32) []int32 {
	if lo > hi {
		return sel[:0]
	}
	width := uint64(hi) - uint64(lo)
	n := 0
	for _, r := range sel {
		sel[n] = r
		if uint64(vals[r])-uint64(lo) <= width {
			n++
		}
	}
	return sel[:n]
}

// apply narrows the selection sel to the rows of v that pass.
func (f *filter) apply(v *vector, sel []int32) []int32 {
	switch f.desc.vec {
	case vecInts:
		if f.span && !v.nulls {
			return filterSpan(f.lo, f.hi, v.ints, sel)
		}
		return filterRows(&f.ints, v.ints, v.valid, v.nulls, sel)
	case vecFloats:
		return filterRows(&f.flts, v.floats, v.valid, v.nulls, sel)
	}
	out := sel[:0]
	if f.bytes.empty {
		return out
	}
	for _, r := range sel {
		if v.nulls && !v.valid[r] {
			continue
		}
		if f.matchBytes(v.refs[r]) {
			out = append(out, r)
		}
	}
	return out
}

// matchBytes reports whether a byte-array value passes the filter.
func (f *filter) matchBytes(b []byte) bool {
	return f.bytes.match(unsafe.String(unsafe.SliceData(b), len(b)))
}

// mayMatch reports whether a column chunk's statistics allow a row to pass.
// Without statistics it answers true.
func (f *filter) mayMatch(cc *pq.FileColumnChunk) (ok bool) {
	defer func() {
		if recover() != nil { // unparsable statistics: do not skip
			ok = true
		}
	}()
	if n := cc.NumValues(); n > 0 && cc.NullCount() == n {
		return false // only NULLs
	}
	lo, hi, has := cc.Bounds()
	if !has {
		return true
	}
	switch f.desc.vec {
	case vecInts:
		return f.ints.overlaps(statInt(f.desc, lo), statInt(f.desc, hi))
	case vecFloats:
		a, b := statFloat(lo), statFloat(hi)
		if math.IsNaN(a) || math.IsNaN(b) {
			return true
		}
		return f.flts.overlaps(a, b)
	}
	return f.bytes.overlaps(string(lo.ByteArray()), string(hi.ByteArray()))
}

// defaultSelectivity is a filter's share of rows when statistics tell nothing.
const defaultSelectivity = 0.5

// selectivity estimates the share of a column chunk's rows that pass the
// filter from the chunk's min and max, assuming values spread evenly between
// them: a range keeps its overlap with [min, max]; a set keeps one value's
// share per member (integers: 1/(max-min+1); others: 1/10, at most 1).
func (f *filter) selectivity(cc *pq.FileColumnChunk) (s float64) {
	defer func() {
		if recover() != nil {
			s = defaultSelectivity
		}
	}()
	if !f.mayMatch(cc) {
		return 0
	}
	lo, hi, has := cc.Bounds()
	if !has {
		return defaultSelectivity
	}
	switch f.desc.vec {
	case vecInts:
		a, b := float64(statInt(f.desc, lo)), float64(statInt(f.desc, hi))
		if f.ints.isSet {
			return min(1, float64(len(f.ints.set))/(b-a+1))
		}
		l, h := a, b
		if f.ints.hasLo {
			l = max(l, float64(f.ints.lo))
		}
		if f.ints.hasHi {
			h = min(h, float64(f.ints.hi))
		}
		return clamp01((h - l + 1) / (b - a + 1))
	case vecFloats:
		a, b := statFloat(lo), statFloat(hi)
		if math.IsNaN(a) || math.IsNaN(b) || b <= a {
			return defaultSelectivity
		}
		if f.flts.isSet {
			return min(1, float64(len(f.flts.set))/10)
		}
		l, h := a, b
		if f.flts.hasLo {
			l = max(l, f.flts.lo)
		}
		if f.flts.hasHi {
			h = min(h, f.flts.hi)
		}
		return clamp01((h - l) / (b - a))
	}
	if f.bytes.isSet {
		return min(1, float64(len(f.bytes.set))/10)
	}
	return defaultSelectivity // string ranges: no useful interpolation
}

func clamp01(x float64) float64 { return max(0, min(1, x)) }

func statInt(d *colDesc, v pq.Value) int64 {
	switch d.phys {
	case pq.Boolean:
		if v.Boolean() {
			return 1
		}
		return 0
	case pq.Int32:
		if d.unsigned {
			return int64(uint32(v.Int32()))
		}
		return int64(v.Int32())
	}
	return v.Int64()
}

func statFloat(v pq.Value) float64 {
	if v.Kind() == pq.Float {
		return float64(v.Float())
	}
	return v.Double()
}

// compileFilter converts spec to column d's domain.
func compileFilter(spec filterSpec, d *colDesc, col int) (*filter, error) {
	f := &filter{col: col, desc: d}
	want := 1
	switch spec.op {
	case Eq, Lt, Le, Gt, Ge:
	case Between:
		want = 2
	case In:
		want = -1
	default:
		return nil, fmt.Errorf("filter on %q: unknown operation %v", spec.column, spec.op)
	}
	if want > 0 && len(spec.values) != want || want < 0 && len(spec.values) == 0 {
		return nil, fmt.Errorf("filter on %q: %v takes %d value(s), got %d", spec.column, spec.op, max(want, 1), len(spec.values))
	}
	var err error
	switch d.vec {
	case vecInts:
		if d.unsigned && d.phys == pq.Int64 {
			return nil, fmt.Errorf("filter on %q: filters on unsigned 64-bit columns are not supported", spec.column)
		}
		err = compileInts(&f.ints, spec, d)
		f.lo, f.hi, f.span = closedInts(&f.ints)
	case vecFloats:
		err = compileOrdered(&f.flts, spec, func(x any) (float64, error) {
			v, err := toFloat(x, d)
			if d.phys == pq.Float {
				// Compare as a float32 field would: 0.1 means float32(0.1).
				v = float64(float32(v))
			}
			return v, err
		})
	default:
		err = compileOrdered(&f.bytes, spec, func(x any) (string, error) { return toBytes(x, d) })
	}
	if err != nil {
		return nil, fmt.Errorf("filter on %q: %w", spec.column, err)
	}
	return f, nil
}

func compileOrdered[V float64 | string](b *bounds[V], spec filterSpec, conv func(any) (V, error)) error {
	vals := make([]V, len(spec.values))
	for i, x := range spec.values {
		v, err := conv(x)
		if err != nil {
			return err
		}
		vals[i] = v
	}
	switch spec.op {
	case Eq, In:
		b.isSet, b.set = true, vals
	case Lt:
		b.hasHi, b.hi = true, vals[0]
	case Le:
		b.hasHi, b.hi, b.hiInc = true, vals[0], true
	case Gt:
		b.hasLo, b.lo = true, vals[0]
	case Ge:
		b.hasLo, b.lo, b.loInc = true, vals[0], true
	case Between:
		b.hasLo, b.lo, b.loInc = true, vals[0], true
		b.hasHi, b.hi, b.hiInc = true, vals[1], true
	}
	return nil
}

func toFloat(x any, d *colDesc) (float64, error) {
	switch v := x.(type) {
	case float64:
		return v, nil
	case float32:
		return float64(v), nil
	case Decimal:
		return v.Float64(), nil
	}
	if r, ok := intRat(x); ok {
		f, _ := r.Float64()
		return f, nil
	}
	return 0, fmt.Errorf("value %v (%T) does not compare with column type %s", x, x, d.typeName())
}

func toBytes(x any, d *colDesc) (string, error) {
	switch v := x.(type) {
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	}
	return "", fmt.Errorf("value %v (%T) does not compare with column type %s", x, x, d.typeName())
}

func intRat(x any) (*big.Rat, bool) {
	switch v := x.(type) {
	case int:
		return new(big.Rat).SetInt64(int64(v)), true
	case int8:
		return new(big.Rat).SetInt64(int64(v)), true
	case int16:
		return new(big.Rat).SetInt64(int64(v)), true
	case int32:
		return new(big.Rat).SetInt64(int64(v)), true
	case int64:
		return new(big.Rat).SetInt64(v), true
	case uint:
		return new(big.Rat).SetUint64(uint64(v)), true
	case uint8:
		return new(big.Rat).SetUint64(uint64(v)), true
	case uint16:
		return new(big.Rat).SetUint64(uint64(v)), true
	case uint32:
		return new(big.Rat).SetUint64(uint64(v)), true
	case uint64:
		return new(big.Rat).SetUint64(v), true
	}
	return nil, false
}

// toRat converts a filter value to an exact rational in column d's stored
// units: unscaled DECIMAL integers, days for DATE, the unit of a TIMESTAMP.
func toRat(x any, d *colDesc) (*big.Rat, error) {
	bad := fmt.Errorf("value %v (%T) does not compare with column type %s", x, x, d.typeName())
	var r *big.Rat
	switch v := x.(type) {
	case Date:
		if !d.date {
			return nil, bad
		}
		return new(big.Rat).SetInt64(int64(v)), nil
	case time.Time:
		ns := new(big.Int).Mul(big.NewInt(v.Unix()), big.NewInt(1e9))
		ns.Add(ns, big.NewInt(int64(v.Nanosecond())))
		switch {
		case d.date:
			return new(big.Rat).SetFrac(ns, big.NewInt(86400e9)), nil
		case d.tsUnit != 0:
			return new(big.Rat).SetFrac(ns, big.NewInt(d.tsUnit)), nil
		}
		return nil, bad
	case bool:
		if d.phys != pq.Boolean {
			return nil, bad
		}
		if v {
			return new(big.Rat).SetInt64(1), nil
		}
		return new(big.Rat), nil
	case float64, float32:
		f, _ := toFloat(v, d)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("value %v cannot compare with column type %s", x, d.typeName())
		}
		// The shortest decimal that reads back as f: 0.07 is 7/100, not
		// the binary fraction just above it.
		var ok bool
		if r, ok = new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64)); !ok {
			return nil, bad
		}
	case Decimal:
		r = new(big.Rat).SetFrac(big.NewInt(v.Unscaled), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(v.Scale)), nil))
	default:
		var ok bool
		if r, ok = intRat(x); !ok {
			return nil, bad
		}
	}
	if d.date || d.tsUnit != 0 || d.phys == pq.Boolean {
		return nil, bad
	}
	return r.Mul(r, new(big.Rat).SetInt64(pow10[d.scale])), nil
}

// intBound rounds r down (or up) to an int64; out reports -1 or +1 when the
// result lies below or above the int64 range.
func intBound(r *big.Rat, up bool) (v int64, out int) {
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() != 0 { // QuoRem truncates toward zero
		if up && r.Sign() > 0 {
			q.Add(q, big.NewInt(1))
		} else if !up && r.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		}
	}
	if !q.IsInt64() {
		return 0, q.Sign()
	}
	return q.Int64(), 0
}

func compileInts(b *bounds[int64], spec filterSpec, d *colDesc) error {
	rats := make([]*big.Rat, len(spec.values))
	for i, x := range spec.values {
		r, err := toRat(x, d)
		if err != nil {
			return err
		}
		rats[i] = r
	}
	b.hasLo, b.hasHi, b.loInc, b.hiInc = true, true, true, true
	b.lo, b.hi = math.MinInt64, math.MaxInt64
	setLo := func(r *big.Rat, up bool, plus int64) {
		v, out := intBound(r, up)
		switch {
		case out > 0:
			b.empty = true
		case out == 0 && v+plus >= v: // no overflow
			b.lo = max(b.lo, v+plus)
		case out == 0:
			b.empty = true
		}
	}
	setHi := func(r *big.Rat, up bool, minus int64) {
		v, out := intBound(r, up)
		switch {
		case out < 0:
			b.empty = true
		case out == 0 && v-minus <= v:
			b.hi = min(b.hi, v-minus)
		case out == 0:
			b.empty = true
		}
	}
	switch spec.op {
	case Eq, In:
		b.isSet = true
		for _, r := range rats {
			if r.IsInt() && r.Num().IsInt64() {
				b.set = append(b.set, r.Num().Int64())
			}
		}
		b.empty = len(b.set) == 0
	case Lt:
		setHi(rats[0], true, 1)
	case Le:
		setHi(rats[0], false, 0)
	case Gt:
		setLo(rats[0], false, 1)
	case Ge:
		setLo(rats[0], true, 0)
	case Between:
		setLo(rats[0], true, 0)
		setHi(rats[1], false, 0)
	}
	if b.lo > b.hi {
		b.empty = true
	}
	return nil
}
