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
	"time"

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

// TestCSVPositionIsByteOffset checks the position against the file: after k
// records, Offset is the byte where record k+1 starts (a quoted newline and
// a blank line in between) and Records is k; a reader restored there reads
// the rest with the file's line numbers.
func TestCSVPositionIsByteOffset(t *testing.T) {
	data := "\xef\xbb\xbfn,name\n1,a\n2,\"b\nc\"\n\n3,d\n4,x\n"
	path := writeFile(t, t.TempDir(), "p.csv", data)
	src, err := Files(CSV[row](csv.Options{BatchRows: 1}), path)
	if err != nil {
		t.Fatal(err)
	}
	_, rs := newReaders(t, src, 1, nil)
	res := result[row]{bySplit: map[string][]row{}}
	for k, next := range []string{"2,", "\n3,", "4,x"} {
		readRecords(t, rs[0], &res, 1)
		want := Split{ID: path, Offset: int64(strings.Index(data, next)), Records: int64(k + 1), Len: -1}
		if next[0] == '\n' { // the blank line is skipped with the record after it
			want.Offset = int64(strings.Index(data, "\n\n3,") + 1)
		}
		if got := rs[0].Positions(); len(got) != 1 || got[0] != want {
			t.Fatalf("after record %d: positions %v, want %v", k+1, got, want)
		}
	}
	if got := res.all; !slices.Equal(got, []row{{"a", 1}, {"b\nc", 2}, {"d", 3}}) {
		t.Fatalf("records %v", got)
	}
	bad := strings.Replace(data, "4,x", "4,y\nz5,e", 1)
	writeFile(t, filepath.Dir(path), "p.csv", bad)
	_, rs = newReaders(t, src, 1, nil)
	rs[0].AddSplits([]Split{{ID: path, Offset: int64(strings.Index(bad, "4,y")), Records: 3, Len: -1}})
	got, err := nextRecords(t.Context(), rs[0], 3)
	if !slices.Equal(got, []row{{"y", 4}}) || err == nil || !strings.Contains(err.Error(), path+" line 8, column n") {
		t.Fatalf("restored: %v, %v; want the record of line 7 and an error naming line 8", got, err)
	}
	// a record index, as positions were before byte offsets, is refused
	_, rs = newReaders(t, src, 1, nil)
	rs[0].AddSplits([]Split{{ID: path, Offset: 2, Records: 2, Len: -1}})
	if _, err := nextRecords(t.Context(), rs[0], 1); err == nil || !strings.Contains(err.Error(), "record index") {
		t.Fatalf("record index: %v", err)
	}
}

// TestCSVThrottledBatches hands out at most the throttle's allowance and
// resumes at the byte offset after it.
func TestCSVThrottledBatches(t *testing.T) {
	want := makeRows(50)
	path := writeFile(t, t.TempDir(), "t.csv", csvText(want))
	src, err := Files(CSV[row](csv.Options{BatchRows: 1024}), path)
	if err != nil {
		t.Fatal(err)
	}
	enum, err := src.Enumerator(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := src.Reader(ReaderContext{Parallelism: 1, Splits: enum, Rate: 7, Clock: &stepClock{now: time.Unix(1000, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var got []row
	for len(got) < len(want) {
		bt, err := b.Next(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(bt.Records) > 7 {
			t.Fatalf("a batch of %d records at 7 a second", len(bt.Records))
		}
		got = append(got, bt.Records...)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v", head(got))
	}
}
