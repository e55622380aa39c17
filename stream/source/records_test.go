package source

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weirdata/weir/formats/csv"
	"github.com/weirdata/weir/formats/parquet"
)

type row struct {
	Name string `weir:"name"`
	N    int64  `weir:"n"`
}

func makeRows(n int) []row {
	out := make([]row, n)
	for i := range out {
		out[i] = row{Name: fmt.Sprintf("r%d,\"q\"", i), N: int64(i * i)}
	}
	return out
}

// csvText writes rows as CSV with a header, quoting names.
func csvText(rows []row) string {
	var b strings.Builder
	b.WriteString("n,name\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%d,%q\n", r.N, strings.ReplaceAll(r.Name, `"`, `'`))
	}
	return strings.ReplaceAll(b.String(), `'`, `""`)
}

func TestCSVFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := makeRows(10), makeRows(4)
	writeFile(t, dir, "a.csv", csvText(a))
	writeFile(t, dir, "b.csv", csvText(b))
	want := append(slices.Clone(a), b...)
	for _, batch := range []int{1, 3, 1024} {
		src, err := Files(CSV[row](csv.Options{BatchRows: batch}), dir)
		if err != nil {
			t.Fatal(err)
		}
		res := readWhole(t, src, 2)
		got := append(slices.Clone(res.bySplit[filepath.Join(dir, "a.csv")]), res.bySplit[filepath.Join(dir, "b.csv")]...)
		if !slices.Equal(got, want) {
			t.Fatalf("batch %d: got %v, want %v", batch, head(got), head(want))
		}
	}
	src, err := Files(CSV[row](csv.Options{BatchRows: 1}), dir)
	if err != nil {
		t.Fatal(err)
	}
	checkResumeEvery(t, src, want)
}

func TestCSVMalformedNamesFileAndLine(t *testing.T) {
	path := writeFile(t, t.TempDir(), "bad.csv", "n,name\n1,a\n2,b\nx3,c\n")
	src, err := Files(CSV[row](csv.Options{BatchRows: 1}), path)
	if err != nil {
		t.Fatal(err)
	}
	_, rs := newReaders(t, src, 1, nil)
	got, err := nextRecords(t.Context(), rs[0], 3)
	if len(got) != 2 {
		t.Fatalf("got %v before the error", got)
	}
	if err == nil || !strings.Contains(err.Error(), path+" line 4, column n") || !strings.HasPrefix(err.Error(), "stream/source: ") {
		t.Fatalf("err = %v, want one naming %s line 4, column n", err, path)
	}
}

func writeParquet(t testing.TB, path string, rows []row, groupRows int64) {
	t.Helper()
	ctx := context.Background()
	w, err := parquet.NewSink[row](path, parquet.RowGroupRows(groupRows)).Create(ctx, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

func TestParquetFiles(t *testing.T) {
	dir := t.TempDir()
	want := makeRows(23)
	path := filepath.Join(dir, "rows.parquet")
	writeParquet(t, path, want, 5)
	for _, batch := range []int{1, 4, 4096} {
		src, err := Files(Parquet[row](parquet.BatchRows(batch)), path)
		if err != nil {
			t.Fatal(err)
		}
		if got := readWhole(t, src, 1).bySplit[path]; !slices.Equal(got, want) {
			t.Fatalf("batch %d: got %v, want %v", batch, head(got), head(want))
		}
	}
	writeFile(t, dir, "notes.txt", "not parquet\n")
	src, err := Files(Parquet[row](parquet.BatchRows(1)), dir)
	if err != nil {
		t.Fatal(err)
	}
	checkResumeEvery(t, src, want)
	// With a filter the index counts the rows it keeps.
	big, err := Files(Parquet[row](parquet.BatchRows(1), parquet.Where("n", parquet.Ge, int64(100))), path)
	if err != nil {
		t.Fatal(err)
	}
	var wantBig []row
	for _, r := range want {
		if r.N >= 100 {
			wantBig = append(wantBig, r)
		}
	}
	checkResumeEvery(t, big, wantBig)
}

func TestParquetCorruptNamesFile(t *testing.T) {
	path := writeFile(t, t.TempDir(), "bad.parquet", "PAR1 this is not parquet "+strconv.Itoa(42))
	src, err := Files(Parquet[row](), path)
	if err != nil {
		t.Fatal(err)
	}
	_, rs := newReaders(t, src, 1, nil)
	_, err = rs[0].Next(t.Context())
	if err == nil || !strings.Contains(err.Error(), path) || errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want one naming %s", err, path)
	}
}
