package parquet

import (
	"context"
	"fmt"
	"math"
	"time"

	pq "github.com/parquet-go/parquet-go"
	"github.com/weirdata/weir/formats"
)

// colRange accumulates one column's statistics across row groups, in the
// column's stored domain.
type colRange struct {
	desc         *colDesc
	known        bool // every chunk had min and max
	seen         bool
	ilo, ihi     int64
	flo, fhi     float64
	slo, shi     string
	nulls        int64
	nullsUnknown bool
}

// Stats returns, from the footers alone, the rows and stored bytes of the
// splits (after row groups ruled out by filters) and, per column Read
// decodes (keyed by the file's column name), min, max and NULL count. Min
// and Max are int64 for integers, float64 for FLOAT/DOUBLE, Decimal for
// DECIMAL, time.Time (UTC) for DATE and TIMESTAMP, bool, and string for byte
// arrays; nil when a chunk had no statistics. Distinct is -1.
func (s *Source[T]) Stats(ctx context.Context) (st formats.Stats, err error) {
	if err := ctx.Err(); err != nil {
		return st, fmt.Errorf("formats/parquet: stats: %w", err)
	}
	st.Columns = map[string]formats.ColumnStats{}
	ranges := map[string]*colRange{}
	var order []string
	var matching float64
	for _, sp := range s.splits {
		sr := sp.(*split)
		st.Rows += sr.rows
		st.Bytes += sr.size
		chunks := sr.f.pf.RowGroups()[sr.rg].ColumnChunks()
		share := 1.0
		for _, flt := range estimateFilters(sr.f.filters) {
			if cc, ok := chunks[flt.desc.leaf].(*pq.FileColumnChunk); ok {
				share *= flt.selectivity(cc)
			} else {
				share *= defaultSelectivity
			}
		}
		for range sr.f.pairs { // no statistics compare two columns
			share *= defaultSelectivity
		}
		matching += share * float64(sr.rows)
		for i := range sr.f.cols {
			d := &sr.f.cols[i]
			cr := ranges[d.name]
			if cr == nil {
				cr = &colRange{desc: d, known: true}
				ranges[d.name] = cr
				order = append(order, d.name)
			}
			cc, ok := chunks[d.leaf].(*pq.FileColumnChunk)
			if !ok {
				cr.known, cr.nullsUnknown = false, true
				continue
			}
			cr.add(cc)
		}
	}
	for _, name := range order {
		st.Columns[name] = ranges[name].stats()
	}
	st.Matching = int64(math.Ceil(matching))
	return st, nil
}

func (cr *colRange) add(cc *pq.FileColumnChunk) {
	defer func() {
		if recover() != nil {
			cr.known = false
		}
	}()
	cr.nulls += cc.NullCount()
	lo, hi, ok := cc.Bounds()
	if !ok {
		if cc.NumValues() > cc.NullCount() {
			cr.known = false
		}
		return
	}
	d := cr.desc
	switch d.vec {
	case vecInts:
		a, b := statInt(d, lo), statInt(d, hi)
		if !cr.seen || a < cr.ilo {
			cr.ilo = a
		}
		if !cr.seen || b > cr.ihi {
			cr.ihi = b
		}
	case vecFloats:
		a, b := statFloat(lo), statFloat(hi)
		if math.IsNaN(a) || math.IsNaN(b) {
			cr.known = false
			return
		}
		if !cr.seen || a < cr.flo {
			cr.flo = a
		}
		if !cr.seen || b > cr.fhi {
			cr.fhi = b
		}
	default:
		a, b := string(lo.ByteArray()), string(hi.ByteArray())
		if !cr.seen || a < cr.slo {
			cr.slo = a
		}
		if !cr.seen || b > cr.shi {
			cr.shi = b
		}
	}
	cr.seen = true
}

func (cr *colRange) stats() formats.ColumnStats {
	cs := formats.ColumnStats{NullCount: cr.nulls, Distinct: -1}
	if cr.nullsUnknown {
		cs.NullCount = -1
	}
	if !cr.known || !cr.seen {
		return cs
	}
	d := cr.desc
	switch d.vec {
	case vecInts:
		cs.Min, cs.Max = intStat(d, cr.ilo), intStat(d, cr.ihi)
	case vecFloats:
		cs.Min, cs.Max = cr.flo, cr.fhi
	default:
		cs.Min, cs.Max = cr.slo, cr.shi
	}
	return cs
}

func intStat(d *colDesc, x int64) any {
	switch {
	case d.phys == pq.Boolean:
		return x != 0
	case d.decimal:
		return Decimal{Unscaled: x, Scale: d.scale}
	case d.date:
		return Date(x).Time()
	case d.tsUnit != 0:
		per := int64(time.Second) / d.tsUnit
		sec := floorDiv(x, per)
		return time.Unix(sec, (x-sec*per)*d.tsUnit).UTC()
	}
	return x
}

// estimateFilters returns the filters whose selectivities multiply in an
// estimate: the ranges declared on one column (a lower and an upper bound,
// say) merged into their intersection, since they are not independent.
func estimateFilters(fs []*filter) []*filter {
	var out []*filter
	at := map[int]int{} // column leaf -> index in out of its merged range
	for _, f := range fs {
		i, seen := at[f.desc.leaf]
		if !seen || !isRange(f) || !isRange(out[i]) {
			if isRange(f) && !seen {
				at[f.desc.leaf] = len(out)
			}
			out = append(out, f)
			continue
		}
		m := *out[i]
		m.ints = intersect(m.ints, f.ints)
		m.flts = intersect(m.flts, f.flts)
		m.bytes = intersect(m.bytes, f.bytes)
		out[i] = &m
	}
	return out
}

// isRange reports whether f is a range (not a set, not empty).
func isRange(f *filter) bool {
	return !f.ints.isSet && !f.flts.isSet && !f.bytes.isSet &&
		!f.ints.empty && !f.flts.empty && !f.bytes.empty
}

// intersect returns the range both a and b allow.
func intersect[V int64 | float64 | string](a, b bounds[V]) bounds[V] {
	if b.hasLo && (!a.hasLo || b.lo > a.lo || b.lo == a.lo && !b.loInc) {
		a.lo, a.hasLo, a.loInc = b.lo, true, b.loInc
	}
	if b.hasHi && (!a.hasHi || b.hi < a.hi || b.hi == a.hi && !b.hiInc) {
		a.hi, a.hasHi, a.hiInc = b.hi, true, b.hiInc
	}
	return a
}
