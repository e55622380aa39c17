package parquet

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	pq "github.com/parquet-go/parquet-go"
	"github.com/weirdata/weir/formats"
)

// Source reads Parquet files into batches of T. It is built by Open, which
// reads every footer and fixes, per file, which columns are read and how each
// becomes a field of T; Read then decodes one row group at a time.
//
// A Source is safe for concurrent use: the runtime calls Read on different
// splits from several goroutines at once. Each Read opens its own file handle.
type Source[T any] struct {
	opts      options
	fields    []formats.Field
	files     []*file
	splits    []formats.Split
	clear     bool    // T has fields Read does not write: clear a batch before filling it
	stride    uintptr // the size of T
	readers   sync.Pool
	bytesRead atomic.Int64
}

// file is one input file with its read plan.
type file struct {
	path    string
	pf      *pq.File
	cols    []colDesc // the columns Read decodes: the fields' columns, then filter-only columns
	fields  []fieldPlan
	filters []*filter
	pairs   []*pairFilter
}

// fieldPlan says how one field of T is filled.
type fieldPlan struct {
	field    formats.Field
	col      int // index into file.cols
	copy     copyFunc
	ptr      bool // the field is a pointer: copy into a new array, then point at it
	alloc    allocFunc
	elemSize uintptr
}

// split is one row group of one file.
type split struct {
	f    *file
	rg   int
	size int64
	rows int64
}

func (s *split) String() string { return fmt.Sprintf("%s row group %d", s.f.path, s.rg) }
func (s *split) Size() int64    { return s.size }

// Open reads the footers of path — a file, a directory (every *.parquet
// file in it, sorted by name) or a glob pattern — and plans how to read them
// into T: each exported field maps to a column (formats.Resolve), and its
// conversion is chosen here once. A missing column, a column whose type does
// not convert to the field's type, a bad filter, or a file that is not
// Parquet is an error naming the file.
func Open[T any](path string, opts ...Option) (*Source[T], error) {
	s := &Source[T]{opts: options{batchRows: DefaultBatchRows}}
	for _, o := range opts {
		o(&s.opts)
	}
	fields, err := formats.Fields[T]()
	if err != nil {
		return nil, fmt.Errorf("formats/parquet: %w", err)
	}
	s.fields = fields
	s.clear = len(fields) != reflect.TypeFor[T]().NumField()
	s.stride = reflect.TypeFor[T]().Size()
	paths, err := formats.Expand(path, ".parquet")
	if err != nil {
		return nil, fmt.Errorf("formats/parquet: %w", err)
	}
	for _, p := range paths {
		f, err := openFile(p, fields, &s.opts)
		if err != nil {
			return nil, err
		}
		s.files = append(s.files, f)
		s.splits = append(s.splits, f.splitsOf()...)
	}
	return s, nil
}

// openFile reads a file's footer and plans its columns.
func openFile(path string, fields []formats.Field, o *options) (*file, error) {
	osf, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("formats/parquet: %w", err)
	}
	defer osf.Close()
	st, err := osf.Stat()
	if err != nil {
		return nil, fmt.Errorf("formats/parquet: %w", err)
	}
	pf, err := openFooter(osf, st.Size())
	if err != nil {
		return nil, fmt.Errorf("formats/parquet: %s: %w", path, err)
	}
	f := &file{path: path, pf: pf}
	if err := f.safePlan(fields, o); err != nil {
		return nil, fmt.Errorf("formats/parquet: %s: %w", path, err)
	}
	return f, nil
}

// openFooter parses the footer; parquet-go may panic on garbage, so a panic
// becomes an error.
func openFooter(r io.ReaderAt, size int64) (pf *pq.File, err error) {
	defer func() {
		if p := recover(); p != nil {
			pf, err = nil, fmt.Errorf("corrupt footer: %v", p)
		}
	}()
	if size < 12 {
		return nil, fmt.Errorf("not a Parquet file: %d bytes", size)
	}
	// Check the footer length first: parquet-go allocates whatever a
	// corrupt length asks for.
	var tail [8]byte
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return nil, fmt.Errorf("read footer: %w", err)
	}
	if string(tail[4:]) != "PAR1" {
		return nil, fmt.Errorf("not a Parquet file: bad magic %q at the end", tail[4:])
	}
	if n := int64(binary.LittleEndian.Uint32(tail[:4])); n > size-12 {
		return nil, fmt.Errorf("corrupt footer: length %d in a file of %d bytes", n, size)
	}
	pf, err = pq.OpenFile(r, size, pq.SkipPageIndex(true), pq.SkipBloomFilters(true), pq.ReadBufferSize(readBufferBytes))
	if err != nil {
		return nil, fmt.Errorf("not a Parquet file or corrupt footer: %w", err)
	}
	for i, rg := range pf.Metadata().RowGroups {
		if len(rg.Columns) != len(pf.Schema().Columns()) {
			return nil, fmt.Errorf("corrupt footer: row group %d has %d column chunks for %d columns", i, len(rg.Columns), len(pf.Schema().Columns()))
		}
		if rg.NumRows < 0 {
			return nil, fmt.Errorf("corrupt footer: row group %d has %d rows", i, rg.NumRows)
		}
	}
	return pf, nil
}

// safePlan is plan with parquet-go's panics on a corrupt schema turned into
// errors.
func (f *file) safePlan(fields []formats.Field, o *options) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt schema: %v", p)
		}
	}()
	return f.plan(fields, o)
}

func (f *file) plan(fields []formats.Field, o *options) error {
	cols, names := topColumns(f.pf)
	idx, err := formats.Resolve(fields, names, f.path)
	if err != nil {
		return err
	}
	colOf := map[int]int{} // top-level index → index into f.cols
	use := func(top int) (int, error) {
		if i, ok := colOf[top]; ok {
			return i, nil
		}
		d, err := describe(cols[top])
		if err != nil {
			return 0, err
		}
		f.cols = append(f.cols, d)
		colOf[top] = len(f.cols) - 1
		return len(f.cols) - 1, nil
	}
	for i, fl := range fields {
		c, err := use(idx[i])
		if err != nil {
			return fmt.Errorf("field %s: %w", fl.GoName, err)
		}
		t := fl.Type
		p := fieldPlan{field: fl, col: c}
		if t.Kind() == reflect.Pointer {
			p.ptr, t = true, t.Elem()
			p.elemSize = t.Size()
		}
		if p.copy, p.alloc, err = copierFor(t, &f.cols[c]); err != nil {
			return fmt.Errorf("field %s: %w", fl.GoName, err)
		}
		f.fields = append(f.fields, p)
	}
	column := func(name string) (int, error) {
		top := slices.Index(names, name)
		if top < 0 {
			top = slices.IndexFunc(names, func(n string) bool { return strings.EqualFold(n, name) })
		}
		if top < 0 {
			return 0, fmt.Errorf("filter on %q: no such column; its columns are %s", name, strings.Join(names, ", "))
		}
		c, err := use(top)
		if err != nil {
			return 0, fmt.Errorf("filter: %w", err)
		}
		return c, nil
	}
	for _, spec := range o.filters {
		c, err := column(spec.column)
		if err != nil {
			return err
		}
		// use may have grown f.cols: point filters at the final slice below.
		flt, err := compileFilter(spec, &f.cols[c], c)
		if err != nil {
			return err
		}
		f.filters = append(f.filters, flt)
	}
	for _, spec := range o.pairs {
		l, err := column(spec.left)
		if err != nil {
			return err
		}
		r, err := column(spec.right)
		if err != nil {
			return err
		}
		p, err := compilePair(spec, &f.cols[l], &f.cols[r], l, r)
		if err != nil {
			return err
		}
		f.pairs = append(f.pairs, p)
	}
	for _, flt := range f.filters {
		flt.desc = &f.cols[flt.col]
	}
	return nil
}

// splitsOf lists the row groups no filter rules out.
func (f *file) splitsOf() []formats.Split {
	var out []formats.Split
	meta := f.pf.Metadata()
	for i, rg := range f.pf.RowGroups() {
		chunks := rg.ColumnChunks()
		skip := false
		for _, flt := range f.filters {
			if cc, ok := chunks[flt.desc.leaf].(*pq.FileColumnChunk); ok && !flt.mayMatch(cc) {
				skip = true
				break
			}
		}
		if skip {
			continue
		}
		var size int64
		for _, c := range f.cols {
			size += meta.RowGroups[i].Columns[c.leaf].MetaData.TotalCompressedSize
		}
		out = append(out, &split{f: f, rg: i, size: size, rows: rg.NumRows()})
	}
	return out
}

// Splits returns one split per row group, in file and row group order,
// leaving out the row groups whose statistics rule out every filter match.
// A split's Size is the stored size of the column chunks Read decodes.
func (s *Source[T]) Splits(ctx context.Context) ([]formats.Split, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("formats/parquet: splits: %w", err)
	}
	return slices.Clone(s.splits), nil
}

// Memory one Read holds per column it decodes: parquet-go's buffered reader
// of the column chunk, and at most a page's worth of stored bytes and three of
// decoded values (the page being decoded, the byte-array page the previous
// batch's strings point into, the dictionary). Writers cut pages at about
// 1 MiB (parquet-go, DuckDB, Arrow), so a page is taken as the smaller of the
// column chunk and maxPageBytes.
const (
	readBufferBytes = 64 << 10
	maxPageBytes    = 1 << 20
)

// ReadMemory implements formats.ReadMemorer: the decode buffers Read holds
// for sp, summed over the columns it decodes (see maxPageBytes), plus the
// batch's value vectors.
func (s *Source[T]) ReadMemory(sp formats.Split) int64 {
	sr, ok := sp.(*split)
	if !ok {
		return 0
	}
	chunks := sr.f.pf.Metadata().RowGroups[sr.rg].Columns
	var n int64
	for _, c := range sr.f.cols {
		md := chunks[c.leaf].MetaData
		n += readBufferBytes + min(md.TotalCompressedSize, maxPageBytes) + 3*min(md.TotalUncompressedSize, maxPageBytes)
		n += int64(s.opts.batchRows) * 8
	}
	return n
}

// BytesRead returns how many bytes all Reads so far have read from files.
func (s *Source[T]) BytesRead() int64 { return s.bytesRead.Load() }

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.ReaderAt
	n *atomic.Int64
}

func (c countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// reader is the state of one Read, pooled and reused by later Reads.
type reader[T any] struct {
	cursors []cursor
	vecs    []vector
	sel     []int32
	filled  []bool  // per column: filled in this batch
	scratch []int32 // ReadKeys' non-NULL rows
	batch   []T
}

// Read decodes split sp (from this Source's Splits) and calls fn with its
// rows that pass the filters, at most BatchRows at a time, in order. ctx is
// checked once per batch.
//
// Ownership: the batch slice is reused after fn returns, but the values in
// it are not: strings, []byte and pointer fields point into memory allocated
// for that batch alone, so fn may keep them.
func (s *Source[T]) Read(ctx context.Context, sp formats.Split, fn func(batch []T) error) error {
	return s.read(ctx, sp, nil, fn)
}

// KeyColumn reports why column cannot filter rows by integer keys
// (formats.KeyFilterer), nil when it can in every file: an integer column
// (INT32 or INT64, neither DECIMAL, DATE nor TIMESTAMP) that Read decodes.
func (s *Source[T]) KeyColumn(column string) error {
	for _, f := range s.files {
		if _, err := f.keyColumn(column); err != nil {
			return err
		}
	}
	return nil
}

// ReadKeys is Read keeping only the rows whose integer column holds a key of
// keys (formats.KeyFilterer), tested after the declared filters and before
// the columns they do not read are decoded; NULLs are kept.
func (s *Source[T]) ReadKeys(ctx context.Context, sp formats.Split, column string, keys formats.KeySet, removed *atomic.Int64, fn func(batch []T) error) error {
	return s.read(ctx, sp, &keyFilter{column: column, keys: keys, removed: removed}, fn)
}

// keyFilter is ReadKeys' filter; read resolves the column's index among the
// split's file's columns.
type keyFilter struct {
	column  string
	col     int
	keys    formats.KeySet
	removed *atomic.Int64
}

// keyColumn returns the index among f.cols of the integer column name.
func (f *file) keyColumn(name string) (int, error) {
	c := slices.IndexFunc(f.cols, func(d colDesc) bool { return d.name == name })
	if c < 0 {
		c = slices.IndexFunc(f.cols, func(d colDesc) bool { return strings.EqualFold(d.name, name) })
	}
	if c < 0 {
		return 0, fmt.Errorf("formats/parquet: %s: key column %q is not a column the source reads", f.path, name)
	}
	d := &f.cols[c]
	if d.vec != vecInts || (d.phys != pq.Int32 && d.phys != pq.Int64) || d.decimal || d.date || d.tsUnit != 0 {
		return 0, fmt.Errorf("formats/parquet: %s: key column %q is not an integer column", f.path, name)
	}
	return c, nil
}

// keep narrows sel to the rows of v whose value is in kf's set, keeping
// NULLs; scratch holds the non-NULL rows while they are tested.
func (kf *keyFilter) keep(v *vector, sel []int32, scratch []int32) []int32 {
	before := len(sel)
	if !v.nulls {
		sel = kf.keys.Keep(v.ints, sel)
	} else {
		// the non-NULL rows are tested, then merged back with the NULL ones
		scratch = scratch[:0]
		for _, r := range sel {
			if v.valid[r] {
				scratch = append(scratch, r)
			}
		}
		kept := kf.keys.Keep(v.ints, scratch)
		out, k := sel[:0], 0
		for _, r := range sel {
			if !v.valid[r] {
				out = append(out, r)
			} else if k < len(kept) && kept[k] == r {
				out = append(out, r)
				k++
			}
		}
		sel = out
	}
	kf.removed.Add(int64(before - len(sel)))
	return sel
}

func (s *Source[T]) read(ctx context.Context, sp formats.Split, kf *keyFilter, fn func(batch []T) error) (err error) {
	sr, ok := sp.(*split)
	if !ok || !slices.Contains(s.files, sr.f) {
		return fmt.Errorf("formats/parquet: read %v: not a split of this source", sp)
	}
	f := sr.f
	if kf != nil {
		c, err := f.keyColumn(kf.column)
		if err != nil {
			return err
		}
		kf.col = c
	}
	r, _ := s.readers.Get().(*reader[T])
	if r == nil {
		r = &reader[T]{}
	}
	defer s.putReader(r)
	osf, err := os.Open(f.path)
	if err != nil {
		return fmt.Errorf("formats/parquet: %w", err)
	}
	defer osf.Close()
	ra := countingReader{r: osf, n: &s.bytesRead}
	r.cursors = grow(r.cursors, len(f.cols))
	r.vecs = grow(r.vecs, len(f.cols))
	chunks := f.pf.RowGroups()[sr.rg].ColumnChunks()
	for i := range f.cols {
		cc, ok := chunks[f.cols[i].leaf].(*pq.FileColumnChunk)
		if !ok {
			return fmt.Errorf("formats/parquet: %v: column %s: unexpected chunk type", sp, f.cols[i].name)
		}
		r.cursors[i].open(&f.cols[i], cc.PagesFrom(ra))
	}
	col := -1     // the column being decoded, for errors
	inFn := false // a panic in fn is the caller's: it propagates
	defer func() {
		p := recover()
		for i := range f.cols {
			if cerr := r.cursors[i].close(); cerr != nil && err == nil {
				err = fmt.Errorf("formats/parquet: %v, column %s: close: %w", sp, f.cols[i].name, cerr)
			}
		}
		switch {
		case p == nil:
		case inFn:
			panic(p)
		case col >= 0:
			err = fmt.Errorf("formats/parquet: %v, column %s: corrupt data (%v)", sp, f.cols[col].name, p)
		default:
			err = fmt.Errorf("formats/parquet: %v: corrupt data (%v)", sp, p)
		}
	}()
	// fill fills column c for the rows of sel of the batch's n (see
	// fillOrSkip), once a batch
	fill := func(c, n int, sel []int32) error {
		if r.filled[c] {
			return nil
		}
		col = c
		if err := r.cursors[c].fillOrSkip(&r.vecs[c], n, sel); err != nil {
			return decodeErr(sp, &f.cols[c], err)
		}
		r.filled[c] = true
		return nil
	}
	rows := int(sr.rows)
	for start := 0; start < rows; start += s.opts.batchRows {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("formats/parquet: %v: %w", sp, err)
		}
		n := min(s.opts.batchRows, rows-start)
		r.sel = grow(r.sel, n)
		for i := range r.sel {
			r.sel[i] = int32(i)
		}
		// The filters in order, each column filled when a filter first reads
		// it, for the rows the filters before kept; then the column
		// comparisons (WhereColumns) alike; then the other columns, for the
		// rows all kept (or skipped when none is).
		sel := r.sel
		r.filled = grow(r.filled, len(f.cols))
		clear(r.filled)
		for _, flt := range f.filters {
			if c := flt.col; !r.filled[c] && flt.desc.vec == vecBytes {
				// filled and filtered in one pass: by dictionary index where
				// the page has one
				col = c
				var err error
				if sel, err = r.cursors[c].fillFilter(&r.vecs[c], n, sel, flt); err != nil {
					return decodeErr(sp, &f.cols[c], err)
				}
				r.filled[c] = true
				continue
			}
			if err := fill(flt.col, n, sel); err != nil {
				return err
			}
			if len(sel) > 0 {
				sel = flt.apply(&r.vecs[flt.col], sel)
			}
		}
		for _, p := range f.pairs {
			if err := fill(p.left, n, sel); err != nil {
				return err
			}
			if err := fill(p.right, n, sel); err != nil {
				return err
			}
			if len(sel) > 0 {
				sel = p.apply(&r.vecs[p.left], &r.vecs[p.right], sel)
			}
		}
		if kf != nil {
			if err := fill(kf.col, n, sel); err != nil {
				return err
			}
			if len(sel) > 0 {
				r.scratch = grow(r.scratch, len(sel))
				sel = kf.keep(&r.vecs[kf.col], sel, r.scratch)
			}
		}
		for c := range f.cols {
			if err := fill(c, n, sel); err != nil {
				return err
			}
		}
		col = -1
		if len(sel) == 0 {
			continue
		}
		if err := s.materialize(r, f, sel, sp, start); err != nil {
			return err
		}
		inFn = true
		if err := fn(r.batch); err != nil {
			return err
		}
		inFn = false
	}
	return nil
}

// putReader pools r without the references of its last batch, so that a
// pooled reader keeps neither pages nor the caller's strings alive.
func (s *Source[T]) putReader(r *reader[T]) {
	clear(r.batch[:cap(r.batch)])
	for i := range r.vecs {
		clear(r.vecs[i].refs[:cap(r.vecs[i].refs)])
	}
	for i := range r.cursors {
		c := &r.cursors[i]
		*c = cursor{bools: c.bools, held: c.held[:0]}
	}
	s.readers.Put(r)
}

func decodeErr(sp formats.Split, d *colDesc, err error) error {
	return fmt.Errorf("formats/parquet: %v, column %s: %w", sp, d.name, err)
}

// materialize fills r.batch with the selected rows, one field at a time.
func (s *Source[T]) materialize(r *reader[T], f *file, sel []int32, sp formats.Split, start int) error {
	r.batch = grow(r.batch, len(sel))
	if s.clear {
		clear(r.batch)
	}
	base := unsafe.Pointer(unsafe.SliceData(r.batch))
	stride := s.stride
	for i := range f.fields {
		p := &f.fields[i]
		v := &r.vecs[p.col]
		if v.nulls && !p.ptr && !s.opts.nullAsZero {
			for _, row := range sel {
				if !v.valid[row] {
					return fmt.Errorf("formats/parquet: %v, row %d, column %s: NULL into non-pointer field %s (use a pointer field or NullAsZero)",
						sp, start+int(row), f.cols[p.col].name, p.field.GoName)
				}
			}
		}
		dst := unsafe.Add(base, p.field.Offset)
		var bad int
		if !p.ptr {
			bad = p.copy(v, sel, dst, stride)
		} else {
			arr := p.alloc(len(sel))
			bad = p.copy(v, sel, arr, p.elemSize)
			for j, row := range sel {
				ptr := (*unsafe.Pointer)(unsafe.Add(dst, uintptr(j)*stride))
				if v.valid[row] {
					*ptr = unsafe.Add(arr, uintptr(j)*p.elemSize)
				} else {
					*ptr = nil
				}
			}
		}
		if bad >= 0 {
			return fmt.Errorf("formats/parquet: %v, row %d, column %s: value out of range of field %s (%s)",
				sp, start+int(sel[bad]), f.cols[p.col].name, p.field.GoName, p.field.Type)
		}
	}
	return nil
}
