package gen

import (
	"bufio"
	"fmt"
	"io"
	"iter"
	"strconv"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/weirdata/weir/formats"
)

// Format is the file format of a graph file.
type Format int

// The formats of graph files.
const (
	Text    Format = iota // one record a line
	Parquet               // Zstd-compressed Parquet
)

// ParseFormat parses "text" or "parquet".
func ParseFormat(s string) (Format, error) {
	switch s {
	case "text":
		return Text, nil
	case "parquet":
		return Parquet, nil
	}
	return 0, fmt.Errorf("gen: unknown format %q (want text or parquet)", s)
}

// String returns "text" or "parquet".
func (f Format) String() string {
	if f == Parquet {
		return "parquet"
	}
	return "text"
}

// Ext returns the file name extension of the format, without the dot: "txt"
// or "parquet".
func (f Format) Ext() string {
	if f == Parquet {
		return "parquet"
	}
	return "txt"
}

// EdgeRow is a row of edges.parquet.
type EdgeRow struct {
	Src int64 `parquet:"src"`
	Dst int64 `parquet:"dst"`
}

// VertexRow is a row of vertices.parquet.
type VertexRow struct {
	ID int64 `parquet:"id"`
}

// parquetRowGroupRows is the number of rows of a Parquet row group: a reader
// splits a file at row groups.
const parquetRowGroupRows = 1 << 17

// WriteFile writes the file path through write, under a temporary name beside
// path that it renames to path when write succeeds; on error nothing is left.
func WriteFile(path string, write func(w io.Writer) error) error {
	tf, err := formats.CreateTemp("gen", path)
	if err != nil {
		return err
	}
	if err := write(tf.F); err != nil {
		tf.Abort()
		return tf.Errorf("write", err)
	}
	if err := tf.Finish(nil); err != nil {
		return err
	}
	return tf.Commit()
}

// WriteEdges writes edges to the file path in format f; see WriteFile.
func WriteEdges(path string, f Format, edges iter.Seq2[int64, int64]) error {
	return WriteFile(path, func(w io.Writer) error {
		if f == Parquet {
			return WriteEdgesParquet(w, edges)
		}
		return WriteEdgesText(w, edges)
	})
}

// WriteVertices writes vertex ids to the file path in format f; see WriteFile.
func WriteVertices(path string, f Format, ids iter.Seq[int64]) error {
	return WriteFile(path, func(w io.Writer) error {
		if f == Parquet {
			return WriteVerticesParquet(w, ids)
		}
		return WriteVerticesText(w, ids)
	})
}

// WriteEdgesText writes each edge as a line "src dst".
func WriteEdgesText(w io.Writer, edges iter.Seq2[int64, int64]) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var buf []byte
	for s, d := range edges {
		buf = strconv.AppendInt(buf[:0], s, 10)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, d, 10)
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteVerticesText writes each id as a line.
func WriteVerticesText(w io.Writer, ids iter.Seq[int64]) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var buf []byte
	for v := range ids {
		buf = strconv.AppendInt(buf[:0], v, 10)
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WritePointsText writes each point as a line of its coordinates separated by
// single spaces, each the shortest decimal that reads back to the same float64.
func WritePointsText(w io.Writer, points iter.Seq[[]float64]) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var buf []byte
	for p := range points {
		buf = appendFloats(buf[:0], p)
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteCentroidsText writes centroid i as a line "id x y ...", with id i+1 (the
// ids of Flink's k-means data start at 1), coordinates as WritePointsText
// writes them.
func WriteCentroidsText(w io.Writer, centroids [][]float64) error {
	bw := bufio.NewWriter(w)
	var buf []byte
	for i, c := range centroids {
		buf = strconv.AppendInt(buf[:0], int64(i+1), 10)
		buf = append(buf, ' ')
		buf = appendFloats(buf, c)
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func appendFloats(buf []byte, xs []float64) []byte {
	for i, x := range xs {
		if i > 0 {
			buf = append(buf, ' ')
		}
		buf = strconv.AppendFloat(buf, x, 'g', -1, 64)
	}
	return buf
}

// WriteEdgesParquet writes edges as a Parquet file with the required INT64
// columns src and dst.
func WriteEdgesParquet(w io.Writer, edges iter.Seq2[int64, int64]) error {
	pw := newParquetWriter[EdgeRow](w)
	rows := make([]EdgeRow, 0, 8192)
	for s, d := range edges {
		rows = append(rows, EdgeRow{Src: s, Dst: d})
		if len(rows) == cap(rows) {
			if _, err := pw.Write(rows); err != nil {
				return err
			}
			rows = rows[:0]
		}
	}
	if _, err := pw.Write(rows); err != nil {
		return err
	}
	return pw.Close()
}

// WriteVerticesParquet writes ids as a Parquet file with the required INT64
// column id.
func WriteVerticesParquet(w io.Writer, ids iter.Seq[int64]) error {
	pw := newParquetWriter[VertexRow](w)
	rows := make([]VertexRow, 0, 8192)
	for v := range ids {
		rows = append(rows, VertexRow{ID: v})
		if len(rows) == cap(rows) {
			if _, err := pw.Write(rows); err != nil {
				return err
			}
			rows = rows[:0]
		}
	}
	if _, err := pw.Write(rows); err != nil {
		return err
	}
	return pw.Close()
}

func newParquetWriter[T any](w io.Writer) *pq.GenericWriter[T] {
	return pq.NewGenericWriter[T](w, pq.Compression(&zstd.Codec{}), pq.MaxRowsPerRowGroup(parquetRowGroupRows))
}
