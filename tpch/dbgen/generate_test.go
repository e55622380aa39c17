package dbgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// sf001 is the SF 0.01 data DuckDB's dbgen wrote, copied into the repository.
const sf001 = "../../testdata/tpch"

// sf01 returns the shared SF 0.1 data, or skips the test.
func sf01(t *testing.T) string {
	t.Helper()
	for _, root := range []string{"../../../shared/tpch", "/work/shared/tpch"} {
		dir := filepath.Join(root, "sf0.1")
		if _, err := os.Stat(filepath.Join(dir, "lineitem.parquet")); err == nil {
			return dir
		}
	}
	t.Skip("SF 0.1 TPC-H data not found (/work/shared/tpch/sf0.1)")
	return ""
}

// openParquet opens a Parquet file for reading.
func openParquet(t *testing.T, path string) (*parquet.File, func()) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return pf, func() { f.Close() }
}

// compareFiles checks that got has want's schema (column names, physical and
// logical types) and exactly its rows, value by value (decimals as their
// unscaled integers, dates as days, strings as bytes).
func compareFiles(t *testing.T, got, want string) {
	t.Helper()
	g, closeG := openParquet(t, got)
	defer closeG()
	w, closeW := openParquet(t, want)
	defer closeW()
	if gs, ws := g.Schema().String(), w.Schema().String(); trimSchemaName(gs) != trimSchemaName(ws) {
		t.Fatalf("%s: schema\n%s\nwant\n%s", got, gs, ws)
	}
	if g.NumRows() != w.NumRows() {
		t.Errorf("%s: %d rows, want %d", got, g.NumRows(), w.NumRows())
	}
	gr, wr := parquet.NewReader(g), parquet.NewReader(w)
	defer gr.Close()
	defer wr.Close()
	gb, wb := make([]parquet.Row, 512), make([]parquet.Row, 512)
	row, bad := 0, 0
	for {
		n, gerr := gr.ReadRows(gb)
		m, werr := readFull(wr, wb[:n])
		if m != n {
			t.Fatalf("%s: reading rows at %d: got %d, want %d (%v, %v)", got, row, n, m, gerr, werr)
		}
		for i := range n {
			if d := diffRow(gb[i], wb[i]); d != "" {
				t.Errorf("%s row %d: %s", filepath.Base(got), row+i, d)
				if bad++; bad > 10 {
					t.FailNow()
				}
			}
		}
		row += n
		if errors.Is(gerr, io.EOF) || n == 0 {
			break
		}
		if gerr != nil {
			t.Fatal(gerr)
		}
	}
	if row != int(w.NumRows()) {
		t.Errorf("%s: compared %d rows, want %d", got, row, w.NumRows())
	}
}

// trimSchemaName drops the message name (DuckDB's is duckdb_schema) and the
// repetition: DuckDB's columns are OPTIONAL (nullable) and hold no null,
// ours are REQUIRED.
func trimSchemaName(s string) string {
	if i := strings.IndexByte(s, '{'); i >= 0 {
		s = s[i:]
	}
	return strings.NewReplacer("optional ", "", "required ", "").Replace(s)
}

func readFull(r *parquet.Reader, rows []parquet.Row) (int, error) {
	n := 0
	for n < len(rows) {
		m, err := r.ReadRows(rows[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func diffRow(got, want parquet.Row) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d columns, want %d", len(got), len(want))
	}
	for c := range got {
		g, w := got[c], want[c]
		if g.Kind() != w.Kind() || g.IsNull() || w.IsNull() || !bytes.Equal(g.Bytes(), w.Bytes()) {
			return fmt.Sprintf("column %d: %v, want %v", c, g, w)
		}
	}
	return ""
}

// generateAndCompare generates all tables at sf into a temporary directory
// and compares each with ref.
func generateAndCompare(t *testing.T, sf float64, parallelism int, ref string) {
	dir := t.TempDir()
	if err := Generate(context.Background(), Options{Scale: sf, Dir: dir, Parallelism: parallelism}); err != nil {
		t.Fatal(err)
	}
	for _, tb := range TableNames {
		t.Run(tb, func(t *testing.T) {
			compareFiles(t, filepath.Join(dir, tb+".parquet"), filepath.Join(ref, tb+".parquet"))
		})
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != len(TableNames) {
		t.Errorf("%d files in the output directory, want %d", len(ents), len(TableNames))
	}
}

// TestGenerateSF001 checks every row and column of the eight tables at
// SF 0.01 against DuckDB's.
func TestGenerateSF001(t *testing.T) {
	generateAndCompare(t, 0.01, 1, sf001)
}

// TestGenerateSF001Parallel generates in small blocks on several goroutines,
// so that blocks start at arbitrary rows: the files must not change.
func TestGenerateSF001Parallel(t *testing.T) {
	defer func(o, p, x int64) { orderBlock, partBlock, otherBlock = o, p, x }(orderBlock, partBlock, otherBlock)
	orderBlock, partBlock, otherBlock = 777, 301, 97
	generateAndCompare(t, 0.01, 3, sf001)
}

// TestGenerateSF01 checks SF 0.1 against DuckDB's (skipped without the
// shared data, and with -short).
func TestGenerateSF01(t *testing.T) {
	ref := sf01(t)
	if testing.Short() {
		t.Skip("-short")
	}
	generateAndCompare(t, 0.1, 2, ref)
}

// TestGenerateCancelled cancels a run after its first batch: Generate
// returns the cancellation and leaves no file, not even a temporary one.
func TestGenerateCancelled(t *testing.T) {
	defer func(o int64) { orderBlock = o }(orderBlock)
	orderBlock = 100
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := Generate(ctx, Options{Scale: 0.01, Dir: dir, Parallelism: 2, Progress: func(string, int64) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Generate: %v, want context.Canceled", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files left: %v", ents)
	}
}

func TestGenerateOptionErrors(t *testing.T) {
	dir := t.TempDir()
	for _, o := range []Options{
		{Scale: 0, Dir: dir},
		{Scale: 0.01},
		{Scale: 0.01, Dir: dir, Tables: []string{"lineitems"}},
	} {
		if err := Generate(context.Background(), o); err == nil || !strings.HasPrefix(err.Error(), "tpch/dbgen: ") {
			t.Errorf("Generate(%+v): %v, want an error from tpch/dbgen", o, err)
		}
	}
}
