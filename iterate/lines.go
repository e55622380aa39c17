package iterate

import (
	"errors"
	"math"
	"strconv"

	"fmt"

	"github.com/weirdata/weir/dataset"
	"github.com/weirdata/weir/formats/parquet"
	"github.com/weirdata/weir/formats/text"
	"github.com/weirdata/weir/internal/lines"

	"github.com/weirdata/weir/formats"
)

// ParseError is a malformed line of an input file (text.ParseError). Run
// functions return it wrapped only in their own prefix ("iterate: pagerank: "),
// so that the one-line message names the file and the line.
type ParseError = text.ParseError

// openLines opens a file, a directory or a glob of lines, parsed into T one
// line at a time (text.OpenParsed: byte ranges of the files, cut for the
// job's parallelism; an error names its file and line). parse copies what it
// keeps of the line.
func openLines[T any](path string, parse func([]byte) (T, error)) (formats.Source[T], error) {
	return text.OpenParsed(path, func(line []byte, _ *text.Strings) (T, error) { return parse(line) })
}

// Edge is a directed edge from Src to Dst (a link, for PageRank). The tags
// name its Parquet columns.
type Edge struct {
	Src int64 `weir:"src"`
	Dst int64 `weir:"dst"`
}

// vertexRow is a row of a Parquet vertex file: an INT64 column id.
type vertexRow struct {
	ID int64 `weir:"id"`
}

// isParquet reports whether path names a Parquet file: its name ends in
// ".parquet", in any case (lines.IsParquet).
func isParquet(path string) bool { return lines.IsParquet(path) }

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
		src, err := parquet.Open[Edge](path) // INT64 columns src and dst
		if err != nil {
			return nil, err
		}
		return dataset.FromSource(env, name+" "+path, src), nil
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
