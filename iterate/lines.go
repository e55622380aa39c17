package iterate

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"bufio"
	"context"
	"fmt"
	"os"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/formats/parquet"

	"github.com/weirdata/weir/formats"
)

// ParseError is a malformed line of an input file. Run functions return it
// wrapped only in their own prefix ("iterate: pagerank: "), so that the one-line
// message names the file and the line.
type ParseError struct {
	File string // the file, as given or as a directory or glob expanded it
	Line int    // 1-based
	Err  error  // what is wrong with the line
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s line %d: %v", e.File, e.Line, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// lineSource reads files of lines and parses every line into a T. Each file is
// one split read from start to end, so that an error can name its line; the
// program's other operators still run in parallel after the first shuffle.
// It implements formats.Source[T]; Read may run concurrently for different files.
type lineSource[T any] struct {
	files []fileSplit
	// parse turns one line (without '\n' or a trailing '\r') into a record. The
	// line is valid only during the call: parse copies what it keeps.
	parse func(line []byte) (T, error)
}

// fileSplit is one whole file.
type fileSplit struct {
	path string
	size int64
}

func (s *fileSplit) String() string { return s.path }
func (s *fileSplit) Size() int64    { return s.size }

var _ formats.Source[Edge] = (*lineSource[Edge])(nil)

// openLines opens a file, a directory or a glob (formats.Expand's rules) of lines.
func openLines[T any](path string, parse func([]byte) (T, error)) (*lineSource[T], error) {
	paths, err := formats.Expand(path, "")
	if err != nil {
		return nil, err
	}
	s := &lineSource[T]{parse: parse}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if st.IsDir() {
			return nil, fmt.Errorf("%s is a directory", p)
		}
		s.files = append(s.files, fileSplit{path: p, size: st.Size()})
	}
	return s, nil
}

// Splits returns one split per file.
func (s *lineSource[T]) Splits(ctx context.Context) ([]formats.Split, error) {
	out := make([]formats.Split, len(s.files))
	for i := range s.files {
		out[i] = &s.files[i]
	}
	return out, ctx.Err()
}

// Stats reports the files' size; the number of lines is unknown.
func (s *lineSource[T]) Stats(ctx context.Context) (formats.Stats, error) {
	st := formats.Stats{Rows: -1}
	for _, f := range s.files {
		st.Bytes += f.size
	}
	return st, ctx.Err()
}

// readBatch is the number of records Read passes at a time.
const readBatch = 1024

// Read parses the lines of one file, a batch at a time, checking ctx once per
// batch. A malformed line stops it with a *ParseError.
func (s *lineSource[T]) Read(ctx context.Context, sp formats.Split, fn func(batch []T) error) error {
	fs, ok := sp.(*fileSplit)
	if !ok {
		return fmt.Errorf("iterate: split %s is not a file", sp)
	}
	f, err := os.Open(fs.path)
	if err != nil {
		return fmt.Errorf("iterate: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<30)
	batch := make([]T, 0, readBatch)
	line := 0
	for sc.Scan() {
		line++
		v, err := s.parse(sc.Bytes())
		if err != nil {
			return &ParseError{File: fs.path, Line: line, Err: err}
		}
		batch = append(batch, v)
		if len(batch) == cap(batch) {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("iterate: read %s after line %d: %w", fs.path, line, err)
	}
	if len(batch) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return fn(batch)
}

// Edge is a directed edge from Src to Dst (a link, for PageRank).
type Edge struct {
	Src, Dst int64
}

// vertexRow is a row of a Parquet vertex file: an INT64 column id.
type vertexRow struct {
	ID int64 `weir:"id"`
}

// edgeRow is a row of a Parquet edge file: INT64 columns src and dst.
type edgeRow struct {
	Src int64 `weir:"src"`
	Dst int64 `weir:"dst"`
}

// isParquet reports whether path names a Parquet file.
func isParquet(path string) bool { return strings.HasSuffix(strings.ToLower(path), ".parquet") }

// readVertices reads vertex ids: "id" lines, or a Parquet column id.
func readVertices(env *dataset.Env, name, path string) (*dataset.DataSet[int64], error) {
	if isParquet(path) {
		src, err := parquet.Open[vertexRow](path)
		if err != nil {
			return nil, err
		}
		return dataset.Map(dataset.FromSource(env, name+" "+path, src), func(r vertexRow) int64 { return r.ID }), nil
	}
	src, err := openLines(path, parseVertex)
	if err != nil {
		return nil, err
	}
	return dataset.FromSource(env, name+" "+path, src), nil
}

// readEdges reads edges: "src dst" lines, or Parquet columns src and dst.
func readEdges(env *dataset.Env, name, path string) (*dataset.DataSet[Edge], error) {
	if isParquet(path) {
		src, err := parquet.Open[edgeRow](path)
		if err != nil {
			return nil, err
		}
		return dataset.Map(dataset.FromSource(env, name+" "+path, src), func(r edgeRow) Edge { return Edge{r.Src, r.Dst} }), nil
	}
	src, err := openLines(path, parseEdge)
	if err != nil {
		return nil, err
	}
	return dataset.FromSource(env, name+" "+path, src), nil
}

// readLines reads a text file of records parsed by parse.
func readLines[T any](env *dataset.Env, name, path string, parse func([]byte) (T, error)) (*dataset.DataSet[T], error) {
	src, err := openLines(path, parse)
	if err != nil {
		return nil, err
	}
	return dataset.FromSource(env, name+" "+path, src), nil
}

var (
	errNoInt   = errors.New("not an integer")
	errNoFloat = errors.New("not a number")
)

// parseVertex reads "id"; fields after it are ignored.
func parseVertex(line []byte) (int64, error) {
	f, _, ok := nextField(line)
	if !ok {
		return 0, fmt.Errorf("%q: want a vertex id", line)
	}
	v, err := atoi64(f)
	if err != nil {
		return 0, fmt.Errorf("vertex %q: %w", f, err)
	}
	return v, nil
}

// parseEdge reads "src dst": two integer vertex ids separated by spaces or
// tabs; fields after them are ignored.
func parseEdge(line []byte) (Edge, error) {
	a, rest, okA := nextField(line)
	b, _, okB := nextField(rest)
	if !okA || !okB {
		return Edge{}, fmt.Errorf("%q: want two vertex ids separated by a space", line)
	}
	va, err := atoi64(a)
	if err != nil {
		return Edge{}, fmt.Errorf("vertex %q: %w", a, err)
	}
	vb, err := atoi64(b)
	if err != nil {
		return Edge{}, fmt.Errorf("vertex %q: %w", b, err)
	}
	return Edge{Src: va, Dst: vb}, nil
}

// parseFloats reads every field of line as a float64.
func parseFloats(line []byte) ([]float64, error) {
	var xs []float64
	for {
		f, rest, ok := nextField(line)
		if !ok {
			return xs, nil
		}
		x, err := strconv.ParseFloat(string(f), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%q: %w", f, errNoFloat)
		}
		xs = append(xs, x)
		line = rest
	}
}

// nextField returns the first run of bytes other than spaces and tabs in b and
// what follows it.
func nextField(b []byte) (field, rest []byte, ok bool) {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	j := i
	for j < len(b) && b[j] != ' ' && b[j] != '\t' {
		j++
	}
	return b[i:j], b[j:], j > i
}

// atoi64 parses a decimal int64 without allocating.
func atoi64(b []byte) (int64, error) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, errNoInt
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, errNoInt
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

// formatFloat writes x as the shortest decimal that reads back to it.
func formatFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
