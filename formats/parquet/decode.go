package parquet

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"unsafe"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
)

// vector holds one column of a batch, decoded: row i is ints[i], floats[i] or
// refs[i] depending on the column's vecKind, and valid[i] is false for NULL
// (whose slot holds zero or nil). refs point into the pages (or dictionary)
// of the column chunk, which the cursor keeps until its next fill. Its slices
// are reused from batch to batch.
type vector struct {
	n      int
	nulls  bool // some row of [0, n) is NULL
	valid  []bool
	ints   []int64
	floats []float64
	refs   [][]byte
	stable []bool // refs[i] points into memory no later batch reuses (a copied dictionary)
}

func (v *vector) reset(kind vecKind, n int) {
	v.n, v.nulls = n, false
	v.valid = grow(v.valid, n)
	switch kind {
	case vecInts:
		v.ints = grow(v.ints, n)
	case vecFloats:
		v.floats = grow(v.floats, n)
	case vecBytes:
		v.refs = grow(v.refs, n)
		v.stable = grow(v.stable, n)
	}
}

// grow returns s resliced to n, reallocated only when its capacity is short.
func grow[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n, n+n/4)
	}
	return s[:n]
}

// number is what a page's typed values and a vector's slots may be.
type number interface {
	~uint8 | ~int32 | ~uint32 | ~int64 | ~float32 | ~float64
}

// cursor walks the pages of one column chunk, a run of rows at a time. It
// keeps views of the current page's values (or of its dictionary, with the
// page's indices) and never copies a page.
type cursor struct {
	desc  *colDesc
	pages pq.Pages
	page  pq.Page
	def   []byte // definition levels of the page, nil when the column is required
	rows  int    // rows in the page
	pos   int    // next row of the page
	vpos  int    // next stored (non-NULL) value of the page

	idx      []int32 // dictionary indices of the page, nil for a plain page
	dict     pq.Dictionary
	fromDict bool // the source views below hold dict's values

	i32   []int32
	u32   []uint32
	i64   []int64
	f32   []float32
	f64   []float64
	bools []uint8 // BOOLEAN values unpacked, reused
	bdata []byte
	boffs []uint32 // BYTE_ARRAY offsets, len values+1
	flen  int      // FIXED_LEN_BYTE_ARRAY width
	nvals int      // number of source values

	held []pq.Page // pages the last batch's refs point into

	drefs  [][]byte          // a BYTE_ARRAY dictionary's values by index (shareDict)
	intern map[string][]byte // small dictionaries' values seen so far

	// a byte-array filter's verdicts on the values of dictionary
	// verdictDict (see dictFilter)
	verdicts    []uint8
	verdictDict pq.Dictionary
	verdictOf   *filter
}

const (
	boolKind  = pq.Boolean
	int64Kind = pq.Int64
)

var errShortChunk = errors.New("column chunk holds fewer rows than its row group")

// open starts reading a column chunk.
func (c *cursor) open(desc *colDesc, pages pq.Pages) {
	intern := c.intern
	if c.desc != desc {
		intern = nil // another column's values
	}
	*c = cursor{desc: desc, pages: pages, bools: c.bools, held: c.held[:0], verdicts: c.verdicts[:0],
		drefs: c.drefs[:0], intern: intern}
}

// release lets go of the pages an earlier batch pointed into.
func (c *cursor) release() {
	for i, p := range c.held {
		pq.Release(p)
		c.held[i] = nil
	}
	c.held = c.held[:0]
}

// close releases the current page and the page reader.
func (c *cursor) close() error {
	c.release()
	if c.page != nil {
		pq.Release(c.page)
		c.page = nil
	}
	if c.pages == nil {
		return nil
	}
	err := c.pages.Close()
	c.pages = nil
	return err
}

// next moves to the next page. A byte-array page is held, not released,
// until the next fill: the batch's refs point into it.
func (c *cursor) next() error {
	if c.page != nil {
		if c.desc.vec == vecBytes {
			c.held = append(c.held, c.page)
		} else {
			pq.Release(c.page)
		}
		c.page = nil
	}
	p, err := c.pages.ReadPage()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return errShortChunk
		}
		return err
	}
	c.page = p
	c.rows, c.pos, c.vpos = int(p.NumRows()), 0, 0
	c.def = nil
	stored := c.rows
	if c.desc.maxDef > 0 {
		if def := p.DefinitionLevels(); len(def) > 0 {
			if len(def) != c.rows {
				return fmt.Errorf("page has %d definition levels for %d rows", len(def), c.rows)
			}
			stored = bytes.Count(def, []byte{c.desc.maxDef}) // vectorized
			if stored < c.rows {
				c.def = def // else no NULL: the dense paths apply
			}
		}
	}
	data := p.Data()
	if d := p.Dictionary(); d != nil {
		if data.Kind() != encoding.Int32 {
			return fmt.Errorf("dictionary page indices are %s", data.Kind())
		}
		c.idx = data.Int32()
		if len(c.idx) < stored {
			return fmt.Errorf("page holds %d dictionary indices for %d values", len(c.idx), stored)
		}
		if !c.fromDict || d != c.dict {
			c.dict, c.fromDict = d, true
			if err := c.setSource(d.Page().Data(), d.Len()); err != nil {
				return fmt.Errorf("dictionary: %w", err)
			}
			if c.desc.vec == vecBytes {
				c.shareDict()
			}
		}
		return nil
	}
	c.idx, c.fromDict, c.dict, c.drefs = nil, false, nil, c.drefs[:0]
	if err := c.setSource(data, stored); err != nil {
		return err
	}
	if c.nvals < stored {
		return fmt.Errorf("page holds %d values for %d non-NULL rows", c.nvals, stored)
	}
	return nil
}

// shareDict makes the values of a new BYTE_ARRAY dictionary (in the source
// views) the ones rows share: one copy per column chunk, so that rows point
// at it instead of copying their values per batch, and drefs[x] the value
// of index x. A small dictionary's values are interned across the chunks
// the cursor reads: a value the cursor has seen before is the earlier copy,
// so equal strings of different row groups share their bytes (and compare
// by pointer) and a chunk's copy is dropped as soon as its batches are.
func (c *cursor) shareDict() {
	data := append([]byte(nil), c.bdata...)
	c.bdata = data
	c.drefs = grow(c.drefs, c.nvals)
	small := c.nvals <= internValues && len(data) <= internBytes && len(c.intern) < internMax
	if small && c.intern == nil {
		c.intern = make(map[string][]byte)
	}
	for x := range c.drefs {
		var b []byte
		if c.flen > 0 {
			b = data[x*c.flen : (x+1)*c.flen : (x+1)*c.flen]
		} else {
			b = data[c.boffs[x]:c.boffs[x+1]:c.boffs[x+1]]
		}
		if small {
			if seen, ok := c.intern[string(b)]; ok {
				b = seen
			} else {
				c.intern[unsafe.String(unsafe.SliceData(b), len(b))] = b // data is never written again
			}
		}
		c.drefs[x] = b
	}
}

// Interning bounds (shareDict): dictionaries of at most internValues values
// and internBytes bytes, while the cursor holds fewer than internMax.
const (
	internValues = 256
	internBytes  = 16 << 10
	internMax    = 4096
)

// setSource points the source views at values. n is the number of values
// (needed for BOOLEAN, whose bit-packed bytes do not say).
func (c *cursor) setSource(values encoding.Values, n int) error {
	want := encoding.Kind(c.desc.phys) + 1 // encoding.Kind counts from Undefined = 0
	if values.Kind() != want {
		return fmt.Errorf("page values are %s, column is %s", values.Kind(), want)
	}
	switch c.desc.phys {
	case pq.Boolean:
		bits := values.Boolean()
		n = min(n, len(bits)*8)
		c.bools = grow(c.bools, n)
		for i := range c.bools {
			c.bools[i] = bits[i>>3] >> (i & 7) & 1
		}
		c.nvals = n
	case pq.Int32:
		c.i32 = values.Int32()
		c.u32 = unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(c.i32))), len(c.i32))
		c.nvals = len(c.i32)
	case pq.Int64:
		c.i64 = values.Int64()
		c.nvals = len(c.i64)
	case pq.Float:
		c.f32 = values.Float()
		c.nvals = len(c.f32)
	case pq.Double:
		c.f64 = values.Double()
		c.nvals = len(c.f64)
	case pq.ByteArray:
		c.bdata, c.boffs = values.ByteArray()
		c.flen = 0
		c.nvals = max(len(c.boffs)-1, 0)
		for i := 0; i < c.nvals; i++ {
			if c.boffs[i] > c.boffs[i+1] || int(c.boffs[i+1]) > len(c.bdata) {
				return fmt.Errorf("byte array offsets out of range")
			}
		}
	case pq.FixedLenByteArray:
		c.bdata, c.flen = values.FixedLenByteArray()
		c.boffs = nil
		if c.flen <= 0 {
			return fmt.Errorf("fixed-length byte array of width %d", c.flen)
		}
		c.nvals = len(c.bdata) / c.flen
	}
	return nil
}

// fill decodes the next n rows of the column into v, which is valid until
// the next fill or skip.
func (c *cursor) fill(v *vector, n int) error {
	c.release()
	v.reset(c.desc.vec, n)
	return c.eachPage(n, func(at, k int) bool {
		switch c.desc.vec {
		case vecInts:
			return c.fillInts(v.ints[at:at+k], v.valid[at:at+k], &v.nulls)
		case vecFloats:
			return c.fillFloats(v.floats[at:at+k], v.valid[at:at+k], &v.nulls)
		}
		return c.fillBytes(v, at, k)
	})
}

// eachPage passes the next n rows page by page: each run of k rows of one page,
// rows [at, at+k) of the n, goes to fn, which reports false for a dictionary
// index out of range.
func (c *cursor) eachPage(n int, fn func(at, k int) bool) error {
	for at := 0; at < n; {
		if c.pos == c.rows {
			if err := c.next(); err != nil {
				return err
			}
			continue
		}
		k := min(c.rows-c.pos, n-at)
		if !fn(at, k) {
			return fmt.Errorf("dictionary index out of range")
		}
		c.pos += k
		at += k
	}
	return nil
}

// fillSel is fill for the rows of sel only (ascending, within [0, n)): the
// cursor passes n rows, and v holds the values of the selected rows; the
// others hold anything. A filter's later columns and the columns no filter
// reads are filled so: a value is looked up in the dictionary, or copied,
// only for a row still selected (a byte array is pointed at, not copied).
// Pages with NULLs are filled whole.
func (c *cursor) fillSel(v *vector, n int, sel []int32) error {
	if len(sel) >= n-n/denseSel {
		return c.fill(v, n) // nearly all: sequential loops beat the lookups
	}
	c.release()
	v.reset(c.desc.vec, n)
	j := 0 // sel[j:] are the rows not yet filled
	return c.eachPage(n, func(at, k int) bool {
		rows := rowsBelow(sel, &j, at+k)
		switch {
		case c.def != nil && c.desc.vec == vecInts:
			return c.fillInts(v.ints[at:at+k], v.valid[at:at+k], &v.nulls)
		case c.def != nil && c.desc.vec == vecFloats:
			return c.fillFloats(v.floats[at:at+k], v.valid[at:at+k], &v.nulls)
		case c.def != nil:
			return c.fillBytes(v, at, k)
		case c.desc.vec == vecInts:
			return c.selInts(v.ints, v.valid, rows, at, k)
		case c.desc.vec == vecFloats:
			return c.selFloats(v.floats, v.valid, rows, at, k)
		}
		return c.selBytes(v, rows, at, k)
	})
}

// denseSel: fillSel fills every row when at most n/denseSel of the n are
// not selected.
const denseSel = 4

// rowsBelow returns the rows of sel from *j on that lie below end (the rows
// of a page: sel is ascending), and moves *j past them.
func rowsBelow(sel []int32, j *int, end int) []int32 {
	e, _ := slices.BinarySearch(sel[*j:], int32(end))
	rows := sel[*j : *j+e]
	*j += e
	return rows
}

// fillOrSkip is fillSel, or skip when no row is selected.
func (c *cursor) fillOrSkip(v *vector, n int, sel []int32) error {
	if len(sel) == 0 {
		return c.skip(n)
	}
	return c.fillSel(v, n, sel)
}

// selBytes is fillBytes for the rows of sel, a page without NULLs holding
// rows [at, at+k) of the batch.
func (c *cursor) selBytes(v *vector, sel []int32, at, k int) bool {
	idx, vpos, fromDict := c.idx, c.vpos-at, c.fromDict // row r's value is at vpos+r
	if drefs := c.drefs; fromDict && idx != nil && len(drefs) > 0 {
		for _, r := range sel {
			x := idx[vpos+int(r)]
			if uint(x) >= uint(len(drefs)) {
				return false
			}
			v.refs[r], v.valid[r], v.stable[r] = drefs[x], true, true
		}
		c.vpos += k
		return true
	}
	data, offs, flen, nvals := c.bdata, c.boffs, c.flen, c.nvals
	for _, r := range sel {
		x := vpos + int(r)
		if idx != nil {
			x = int(idx[x])
		}
		if uint(x) >= uint(nvals) {
			return false
		}
		if flen > 0 {
			v.refs[r] = data[x*flen : (x+1)*flen]
		} else {
			v.refs[r] = data[offs[x]:offs[x+1]]
		}
		v.valid[r], v.stable[r] = true, fromDict
	}
	c.vpos += k
	return true
}

// selInts is fillInts for the rows of sel, a page without NULLs holding
// rows [at, at+k) of the batch.
func (c *cursor) selInts(dst []int64, valid []bool, sel []int32, at, k int) bool {
	switch c.desc.phys {
	case pq.Boolean:
		return gatherSel(c, dst, valid, c.bools, sel, at, k)
	case pq.Int32:
		if c.desc.unsigned {
			return gatherSel(c, dst, valid, c.u32, sel, at, k)
		}
		return gatherSel(c, dst, valid, c.i32, sel, at, k)
	default:
		return gatherSel(c, dst, valid, c.i64, sel, at, k)
	}
}

// selFloats is fillFloats for the rows of sel (see selInts).
func (c *cursor) selFloats(dst []float64, valid []bool, sel []int32, at, k int) bool {
	if c.desc.phys == pq.Float {
		return gatherSel(c, dst, valid, c.f32, sel, at, k)
	}
	return gatherSel(c, dst, valid, c.f64, sel, at, k)
}

// gatherSel is gather for the batch rows sel of a page without NULLs whose
// values from the cursor's position are rows [at, at+k) of the batch; the
// cursor's value position passes all k.
func gatherSel[S, D number](c *cursor, dst []D, valid []bool, src []S, sel []int32, at, k int) bool {
	vpos, idx := c.vpos-at, c.idx // row r's value is at vpos+r
	if idx == nil {
		for _, r := range sel {
			dst[r], valid[r] = D(src[vpos+int(r)]), true
		}
	} else {
		for _, r := range sel {
			x := idx[vpos+int(r)]
			if uint(x) >= uint(len(src)) {
				return false
			}
			dst[r], valid[r] = D(src[x]), true
		}
	}
	c.vpos += k
	return true
}

// skip passes over the next n rows without decoding them.
func (c *cursor) skip(n int) error {
	c.release()
	return c.eachPage(n, func(_, k int) bool {
		if c.def == nil {
			c.vpos += k
			return true
		}
		for _, l := range c.def[c.pos : c.pos+k] {
			if l == c.desc.maxDef {
				c.vpos++
			}
		}
		return true
	})
}

func (c *cursor) fillInts(dst []int64, valid []bool, nulls *bool) bool {
	switch c.desc.phys {
	case pq.Boolean:
		return gather(c, dst, valid, c.bools, nulls)
	case pq.Int32:
		if c.desc.unsigned {
			return gather(c, dst, valid, c.u32, nulls)
		}
		return gather(c, dst, valid, c.i32, nulls)
	default:
		return gather(c, dst, valid, c.i64, nulls)
	}
}

func (c *cursor) fillFloats(dst []float64, valid []bool, nulls *bool) bool {
	if c.desc.phys == pq.Float {
		return gather(c, dst, valid, c.f32, nulls)
	}
	return gather(c, dst, valid, c.f64, nulls)
}

// gather copies len(dst) rows from the cursor's position: from src directly,
// or through the page's dictionary indices. It reports false when an index
// is out of range.
func gather[S, D number](c *cursor, dst []D, valid []bool, src []S, nulls *bool) bool {
	vpos, idx := c.vpos, c.idx
	if c.def == nil {
		for i := range valid {
			valid[i] = true
		}
		if idx == nil {
			for i, s := range src[vpos : vpos+len(dst)] {
				dst[i] = D(s)
			}
		} else {
			for i, x := range idx[vpos : vpos+len(dst)] {
				if uint(x) >= uint(len(src)) {
					return false
				}
				dst[i] = D(src[x])
			}
		}
		c.vpos = vpos + len(dst)
		return true
	}
	def, maxDef := c.def[c.pos:c.pos+len(dst)], c.desc.maxDef
	for i, l := range def {
		if l != maxDef {
			dst[i], valid[i] = 0, false
			*nulls = true
			continue
		}
		valid[i] = true
		if idx == nil {
			dst[i] = D(src[vpos])
		} else {
			x := idx[vpos]
			if uint(x) >= uint(len(src)) {
				return false
			}
			dst[i] = D(src[x])
		}
		vpos++
	}
	c.vpos = vpos
	return true
}

// fillBytes points k rows of v, from at, at the cursor's values.
func (c *cursor) fillBytes(v *vector, at, k int) bool {
	valid, refs, stable := v.valid[at:at+k], v.refs[at:at+k], v.stable[at:at+k]
	var def []byte
	if c.def != nil {
		def = c.def[c.pos : c.pos+k]
	}
	maxDef, idx, vpos, fromDict := c.desc.maxDef, c.idx, c.vpos, c.fromDict
	if drefs := c.drefs; def == nil && fromDict && idx != nil && len(drefs) > 0 {
		for i, x := range idx[vpos : vpos+k] {
			if uint(x) >= uint(len(drefs)) {
				return false
			}
			refs[i], valid[i], stable[i] = drefs[x], true, true
		}
		c.vpos = vpos + k
		return true
	}
	data, offs, flen, nvals := c.bdata, c.boffs, c.flen, c.nvals
	for i := range valid {
		if def != nil && def[i] != maxDef {
			valid[i], refs[i], stable[i] = false, nil, true
			v.nulls = true
			continue
		}
		x := vpos
		if idx != nil {
			x = int(idx[vpos])
		}
		if uint(x) >= uint(nvals) {
			return false
		}
		switch {
		case fromDict && len(c.drefs) == nvals:
			refs[i] = c.drefs[x]
		case flen > 0:
			refs[i] = data[x*flen : (x+1)*flen]
		default:
			refs[i] = data[offs[x]:offs[x+1]]
		}
		valid[i], stable[i] = true, fromDict
		vpos++
	}
	c.vpos = vpos
	return true
}
