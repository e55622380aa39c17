package dbgen

import (
	"path/filepath"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"

	"github.com/weirdata/weir/formats"
)

// RowGroupRows is the number of rows per row group of the files Generate
// writes, DuckDB's.
const RowGroupRows = 122880

// tableWriter writes one table's rows to <dir>/<table>.parquet through a
// temporary file: the columns and types of the row struct's parquet tags
// (the types DuckDB writes), Snappy-compressed.
type tableWriter[T any] struct {
	tf   *formats.TempFile
	w    *parquet.GenericWriter[T]
	rows int64
}

const pkg = "tpch/dbgen"

func newTableWriter[T any](dir, table string) (*tableWriter[T], error) {
	tf, err := formats.CreateTemp(pkg, filepath.Join(dir, table+".parquet"))
	if err != nil {
		return nil, err
	}
	w := parquet.NewGenericWriter[T](tf.F,
		parquet.Compression(&snappy.Codec{}),
		parquet.MaxRowsPerRowGroup(RowGroupRows),
		parquet.CreatedBy("weir", "tpch/dbgen", ""),
	)
	return &tableWriter[T]{tf: tf, w: w}, nil
}

func (t *tableWriter[T]) write(rows []T) error {
	if _, err := t.w.Write(rows); err != nil {
		return t.tf.Errorf("write", err)
	}
	t.rows += int64(len(rows))
	return nil
}

// close ends the file (footer, sync, close); on error the temporary file is
// removed.
func (t *tableWriter[T]) close() error {
	var err error
	if cerr := t.w.Close(); cerr != nil {
		err = t.tf.Errorf("close", cerr)
	}
	return t.tf.Finish(err)
}

// file is what Generate needs of a finished or failed writer.
type file interface {
	commit() error
	abort()
	name() string
}

func (t *tableWriter[T]) commit() error { return t.tf.Commit() }
func (t *tableWriter[T]) abort()        { t.tf.Abort() }
func (t *tableWriter[T]) name() string  { return t.tf.Final }

// writeAll writes rows to a new table file and closes it.
func writeAll[T any](dir, table string, rows []T) (file, error) {
	w, err := newTableWriter[T](dir, table)
	if err != nil {
		return nil, err
	}
	if err := w.write(rows); err != nil {
		w.abort()
		return nil, err
	}
	if err := w.close(); err != nil {
		return nil, err
	}
	return w, nil
}
