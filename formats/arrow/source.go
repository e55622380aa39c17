package arrow

import (
	"context"
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirdata/weir/formats"
)

// Source reads records of type T from Arrow IPC files. It implements
// formats.Source[T]; Read may be called concurrently for different splits.
type Source[T any] struct {
	cols  []column
	files []*file
}

// file is one input file with its schema resolved.
type file struct {
	path    string
	size    int64
	batches int
	idx     []int // per struct field, its column in the schema
	schema  *arrow.Schema
}

// Split is one record batch of a file.
type Split struct {
	f     *file
	batch int
}

// String names the split.
func (s *Split) String() string { return fmt.Sprintf("%s record batch %d", s.f.path, s.batch) }

// Size estimates the split's bytes as the file's size over its batches.
func (s *Split) Size() int64 { return s.f.size / int64(max(s.f.batches, 1)) }

var _ formats.Source[struct{ A int }] = (*Source[struct{ A int }])(nil)

// Open opens a file, a directory or a glob of Arrow IPC files, reads each
// schema and resolves T's fields against it (formats.Resolve), checking each
// column's type can fill its field.
func Open[T any](path string) (*Source[T], error) {
	cols, err := columnsOf[T]()
	if err != nil {
		return nil, err
	}
	paths, err := formats.Expand(path, "")
	if err != nil {
		return nil, fmt.Errorf("formats/arrow: %w", err)
	}
	s := &Source[T]{cols: cols}
	for _, p := range paths {
		f, err := s.openFile(p)
		if err != nil {
			return nil, err
		}
		s.files = append(s.files, f)
	}
	return s, nil
}

func (s *Source[T]) openFile(path string) (f *file, err error) {
	r, closeFile, err := openReader(path)
	if err != nil {
		return nil, err
	}
	defer closeFile()
	defer func() {
		if p := recover(); p != nil {
			f, err = nil, fmt.Errorf("formats/arrow: %s: corrupt file: %v", path, p)
		}
	}()
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("formats/arrow: %w", err)
	}
	f = &file{path: path, size: st.Size(), batches: r.NumRecords(), schema: r.Schema()}
	names := make([]string, f.schema.NumFields())
	for i, fl := range f.schema.Fields() {
		names[i] = fl.Name
	}
	fields := make([]formats.Field, len(s.cols))
	for i := range s.cols {
		fields[i] = s.cols[i].Field
	}
	if f.idx, err = formats.Resolve(fields, names, path); err != nil {
		return nil, fmt.Errorf("formats/arrow: %w", err)
	}
	for ci, j := range f.idx {
		c := &s.cols[ci]
		if dt := f.schema.Field(j).Type; !accepts(c, dt) {
			return nil, fmt.Errorf("formats/arrow: %s column %s: type %s cannot fill field %s of type %s",
				path, names[j], dt, c.Field.GoName, c.Field.Type)
		}
	}
	return f, nil
}

// openReader opens path's IPC file reader; closeFile releases both.
func openReader(path string) (r *ipc.FileReader, closeFile func(), err error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("formats/arrow: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("formats/arrow: %s: corrupt file: %v", path, p)
		}
		if err != nil {
			fd.Close()
		}
	}()
	if err = checkFooter(fd); err != nil {
		return nil, nil, fmt.Errorf("formats/arrow: %s: %w", path, err)
	}
	r, err = ipc.NewFileReader(fd, ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return nil, nil, fmt.Errorf("formats/arrow: %s: %w", path, err)
	}
	return r, func() { r.Close(); fd.Close() }, nil
}

// Splits lists every record batch of every file.
func (s *Source[T]) Splits(ctx context.Context) ([]formats.Split, error) {
	var out []formats.Split
	for _, f := range s.files {
		for i := range f.batches {
			out = append(out, &Split{f: f, batch: i})
		}
	}
	return out, ctx.Err()
}

// Stats reports the files' total size; the rows are unknown (-1) without
// reading each batch's header.
func (s *Source[T]) Stats(ctx context.Context) (formats.Stats, error) {
	st := formats.Stats{Rows: -1, Matching: -1}
	for _, f := range s.files {
		st.Bytes += f.size
	}
	return st, ctx.Err()
}

// Read calls fn once with the rows of the split's record batch, in a slice it
// allocates. Strings, []byte values and pointees are copied out of Arrow memory
// and stay valid afterwards.
func (s *Source[T]) Read(ctx context.Context, sp formats.Split, fn func(batch []T) error) (err error) {
	as, ok := sp.(*Split)
	if !ok {
		return fmt.Errorf("formats/arrow: split %s is not an Arrow split", sp)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r, closeFile, err := openReader(as.f.path)
	if err != nil {
		return err
	}
	defer closeFile()
	var rows []T
	func() {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("formats/arrow: %s: corrupt %s: %v", as.f.path, sp, p)
			}
		}()
		rec, rerr := r.RecordBatchAt(as.batch)
		if rerr != nil {
			err = fmt.Errorf("formats/arrow: read %s: %w", sp, rerr)
			return
		}
		defer rec.Release()
		if !rec.Schema().Equal(as.f.schema) {
			err = fmt.Errorf("formats/arrow: %s: schema differs from the file's", sp)
			return
		}
		rows = make([]T, rec.NumRows())
		err = s.copyBatch(as.f, rec, rows)
	}()
	if err != nil || len(rows) == 0 {
		return err
	}
	return fn(rows)
}
