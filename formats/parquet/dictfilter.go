package parquet

// fillFilter fills a byte-array filter's column for the rows of sel and
// applies the filter, in one pass over the pages, and returns the rows that
// pass (sel, narrowed in place). On a dictionary page without NULLs a row is
// judged by its dictionary index: each dictionary value is matched once, the
// first time a row points at it, and only the rows that pass are filled. Other
// pages are filled for the rows of sel and matched row by row, as apply
// does. The verdicts live as long as the dictionary (one per column chunk).
func (c *cursor) fillFilter(v *vector, n int, sel []int32, f *filter) ([]int32, error) {
	if len(sel) == 0 || f.bytes.empty {
		return sel[:0], c.skip(n)
	}
	c.release()
	v.reset(c.desc.vec, n)
	j, out := 0, 0 // sel[j:] are the rows not yet seen; sel[:out] passed
	err := c.eachPage(n, func(at, k int) bool {
		rows := rowsBelow(sel, &j, at+k)
		switch {
		case c.def == nil && c.idx != nil:
			m, ok := c.dictFilter(v, rows, at, k, f, sel[out:])
			out += m
			return ok
		case c.def != nil:
			if !c.fillBytes(v, at, k) {
				return false
			}
		default:
			if !c.selBytes(v, rows, at, k) {
				return false
			}
		}
		out += copy(sel[out:], f.apply(v, rows)) // rows lie at or after sel[out:]
		return true
	})
	return sel[:out], err
}

// Verdicts of a dictionary value under a filter.
const (
	unjudgedValue = iota
	passes
	fails
)

// dictFilter judges the rows of sel, rows [at, at+k) of the batch on a
// dictionary page without NULLs, by their dictionary values' verdicts, fills
// the rows that pass and writes them to out (which may be sel itself: a row
// is written no later than it is read). It returns how many passed, and false
// for an index out of range.
func (c *cursor) dictFilter(v *vector, sel []int32, at, k int, f *filter, out []int32) (int, bool) {
	if c.verdictDict != c.dict || c.verdictOf != f {
		c.verdicts = grow(c.verdicts, c.nvals)
		clear(c.verdicts)
		c.verdictDict, c.verdictOf = c.dict, f
	}
	verdicts, idx, vpos := c.verdicts, c.idx, c.vpos-at // row r's index is at vpos+r
	data, offs, flen, nvals := c.bdata, c.boffs, c.flen, c.nvals
	m := 0
	for _, r := range sel {
		x := int(idx[vpos+int(r)])
		if uint(x) >= uint(nvals) {
			return m, false
		}
		var b []byte
		if flen > 0 {
			b = data[x*flen : (x+1)*flen]
		} else {
			b = data[offs[x]:offs[x+1]]
		}
		verdict := verdicts[x]
		if verdict == unjudgedValue {
			verdict = fails
			if f.matchBytes(b) {
				verdict = passes
			}
			verdicts[x] = verdict
		}
		if verdict == passes {
			v.refs[r], v.valid[r], v.stable[r] = b, true, true
			out[m] = r
			m++
		}
	}
	c.vpos += k
	return m, true
}
