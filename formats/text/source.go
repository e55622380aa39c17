package text

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/weirdata/weir/formats"
)

// Options tune a Source. The zero value is ready to use.
type Options struct {
	// SplitSize is the target size of a split in bytes; 32 MiB when 0.
	SplitSize int64
	// BatchRows is the most records per batch; 1024 when 0.
	BatchRows int
	// ChunkSize is the size of each read; 1 MiB when 0. Lines longer than a chunk
	// grow it.
	ChunkSize int
}

// EnsureDefaults fills zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.SplitSize <= 0 {
		o.SplitSize = 32 << 20
	}
	if o.BatchRows <= 0 {
		o.BatchRows = 1024
	}
	if o.ChunkSize <= 0 {
		o.ChunkSize = 1 << 20
	}
}

// Source reads the lines of one or more files. It implements
// formats.Source[string]; Read may be called concurrently for different splits.
type Source struct {
	files []fileInfo
	opts  Options
}

type fileInfo struct {
	path string
	size int64
}

// Split is a byte range of one file.
type Split struct {
	file       string
	start, end int64
}

// String names the split.
func (s *Split) String() string {
	return fmt.Sprintf("%s bytes %d-%d", filepath.Base(s.file), s.start, s.end)
}

// Size is the split's length in bytes.
func (s *Split) Size() int64 { return s.end - s.start }

var (
	_ formats.Source[string]   = (*Source)(nil)
	_ formats.ParallelSplitter = (*Source)(nil)
)

// Open opens a file, a directory or a glob with default options.
func Open(path string) (*Source, error) { return OpenWith(path, Options{}) }

// OpenWith opens a file, a directory or a glob.
func OpenWith(path string, opts Options) (*Source, error) {
	opts.EnsureDefaults()
	paths, err := formats.Expand(path, "")
	if err != nil {
		return nil, fmt.Errorf("formats/text: %w", err)
	}
	s := &Source{opts: opts}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("formats/text: %w", err)
		}
		s.files = append(s.files, fileInfo{path: p, size: st.Size()})
	}
	return s, nil
}

// Splits cuts every file into equal byte ranges of at most SplitSize.
func (s *Source) Splits(ctx context.Context) ([]formats.Split, error) { return s.SplitsFor(ctx, 1) }

// SplitsFor cuts every file into equal byte ranges for n readers
// (formats.SplitTarget over the files' total size, at most SplitSize).
func (s *Source) SplitsFor(ctx context.Context, n int) ([]formats.Split, error) {
	return splitFiles(s.files, s.opts.SplitSize, n), ctx.Err()
}

// splitFiles cuts files into equal byte ranges for n readers, at most
// splitSize each (formats.SplitTarget over their total size).
func splitFiles(files []fileInfo, splitSize int64, n int) []formats.Split {
	var total int64
	for _, f := range files {
		total += f.size
	}
	target := formats.SplitTarget(total, splitSize, n)
	var out []formats.Split
	for _, f := range files {
		formats.ByteRanges(f.size, target, func(start, end int64) {
			out = append(out, &Split{file: f.path, start: start, end: end})
		})
	}
	return out
}

// Stats reports the files' total size; the number of lines is unknown.
func (s *Source) Stats(ctx context.Context) (formats.Stats, error) {
	st := formats.Stats{Rows: -1, Matching: -1}
	for _, f := range s.files {
		st.Bytes += f.size
	}
	return st, ctx.Err()
}

// Read calls fn with the lines of split sp, a batch at a time.
func (s *Source) Read(ctx context.Context, sp formats.Split, fn func(batch []string) error) error {
	ts, ok := sp.(*Split)
	if !ok {
		return fmt.Errorf("formats/text: split %s is not a text split", sp)
	}
	f, err := os.Open(ts.file)
	if err != nil {
		return fmt.Errorf("formats/text: %w", err)
	}
	defer f.Close()
	r := lineReader{f: f, name: ts.file, chunk: s.opts.ChunkSize, fresh: true}
	if err := r.seek(ts.start); err != nil {
		return err
	}
	batch := make([]string, 0, s.opts.BatchRows)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		err := fn(batch)
		batch = batch[:0]
		return err
	}
	for r.pos < ts.end {
		line, err := r.line()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		batch = append(batch, unsafe.String(unsafe.SliceData(line), len(line)))
		if len(batch) == cap(batch) {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}
