package csv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// Event is a record with its position in the file.
type Event struct {
	Key    string
	Time   int64
	Value  float64
	Offset int64 `weir:",offset"`
	Line   int64 `weir:",line"`
}

// eventsFile writes n events, a blank line after every seventh and a quoted
// key with a newline in every fifth, and returns the events with their
// positions (the oracle: offsets and lines counted while writing).
func eventsFile(t testing.TB, n int) (string, []Event) {
	t.Helper()
	var b strings.Builder
	b.WriteString("key,time,value\n")
	line := int64(2)
	var want []Event
	for i := range n {
		e := Event{Key: fmt.Sprintf("k%d", i%13), Time: int64(1000 + i), Value: float64(i) / 4, Offset: int64(b.Len()), Line: line}
		text := e.Key
		if i%5 == 0 {
			e.Key = fmt.Sprintf("k%d\n\"x\"", i)
			text = fmt.Sprintf("\"k%d\n\"\"x\"\"\"", i)
			line++
		}
		fmt.Fprintf(&b, "%s,%d,%g\n", text, e.Time, e.Value)
		line++
		if i%7 == 6 {
			b.WriteString("\n")
			line++
		}
		want = append(want, e)
	}
	return writeFile(t, b.String()), want
}

// readFrom reads split sp with a Reader from byte offset off (0: from the
// start), returning the records and the offset after each batch.
func readFrom[T any](t testing.TB, src *Source[T], sp any, off int64) ([]T, []int64) {
	t.Helper()
	split := sp.(*Split)
	var s = split
	if off > 0 {
		rest, err := src.Seek(split, off)
		if err != nil {
			t.Fatal(err)
		}
		s = rest.(*Split)
	}
	r, err := src.NewReader(s)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []T
	var offs []int64
	for {
		b, err := r.NextN(3)
		if err == io.EOF {
			return got, offs
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b...)
		offs = append(offs, r.Offset())
	}
}

// TestReaderPositions reads events with their offset and line fields, and
// resumes from every offset a Reader reported: the rest is read exactly,
// with the same line numbers.
func TestReaderPositions(t *testing.T) {
	p, want := eventsFile(t, 60)
	src := mustOpen[Event](t, p, Options{SplitSize: 1 << 40, BatchRows: 8, ChunkSize: 64})
	splits, err := src.Splits(context.Background())
	if err != nil || len(splits) != 1 {
		t.Fatalf("%d splits, %v", len(splits), err)
	}
	got, offs := readFrom(t, src, splits[0], 0)
	if !slices.Equal(got, want) {
		t.Fatalf("got %v\nwant %v", got[:3], want[:3])
	}
	read := 0
	for i, off := range offs {
		read += min(3, len(want)-read)
		if i == len(offs)-1 {
			break
		}
		if off <= want[read-1].Offset || off > want[read].Offset {
			t.Fatalf("batch %d ends at %d, want after %d and at most the next record's offset %d", i, off, want[read-1].Offset, want[read].Offset)
		}
		rest, _ := readFrom(t, src, splits[0], off)
		if !slices.Equal(rest, want[read:]) {
			t.Fatalf("from %d: got %v, want %v", off, rest[:1], want[read])
		}
	}
	if _, err := src.Seek(splits[0], -1); err == nil {
		t.Fatal("a negative offset was accepted")
	}
}

// TestByteOrderMark skips a UTF-8 byte-order mark before the header or the
// first record, and writes a first field starting with one quoted.
func TestByteOrderMark(t *testing.T) {
	type Row struct {
		User   string
		Amount int64
	}
	got, err := readAll(t, mustOpen[Row](t, writeFile(t, bom+"user,amount\nu1,5\n"), Options{}))
	if err != nil || !slices.Equal(got, []Row{{"u1", 5}}) {
		t.Fatalf("header: %v, %v", got, err)
	}
	got, err = readAll(t, mustOpen[Row](t, writeFile(t, bom+"u1,5\nu2,6\n"), Options{NoHeader: true}))
	if err != nil || !slices.Equal(got, []Row{{"u1", 5}, {"u2", 6}}) {
		t.Fatalf("no header: %v, %v", got, err)
	}
	// a BOM elsewhere is data
	got, err = readAll(t, mustOpen[Row](t, writeFile(t, "user,amount\n"+bom+"u1,5\n"), Options{}))
	if err != nil || !slices.Equal(got, []Row{{bom + "u1", 5}}) {
		t.Fatalf("inside: %v, %v", got, err)
	}
	want := []Row{{bom + "x", 1}, {bom, 2}}
	out := filepath.Join(t.TempDir(), "out.csv")
	writeAll(t, NewSink[Row](out, Options{NoHeader: true}), want)
	if got, err := readAll(t, mustOpen[Row](t, out, Options{NoHeader: true})); err != nil || !slices.Equal(got, want) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
}

// TestStrictNumbers refuses NaN, infinities, hexadecimal floats and digit
// separators in number columns, naming the file, line and column; NonFinite
// reads NaN and the infinities.
func TestStrictNumbers(t *testing.T) {
	type Row struct {
		N int64
		F float64
		G float32
	}
	for _, c := range []struct{ n, f, want string }{
		{"1", "NaN", `column f: parsing "NaN": NaN and infinities are refused`},
		{"1", "-Inf", `column f: parsing "-Inf": NaN and infinities`},
		{"1", "infinity", `column f: parsing "infinity": NaN and infinities`},
		{"1", "0x1p3", `column f: parsing "0x1p3": not a decimal number`},
		{"1", "1_000", `column f: parsing "1_000": not a decimal number`},
		{"1", "1e", `column f: parsing "1e": invalid syntax`},
		{"1", ".", `column f: parsing ".": invalid syntax`},
		{"0x10", "1", `column n: parsing "0x10": invalid syntax`},
		{"1_000", "1", `column n: parsing "1_000": invalid syntax`},
	} {
		p := writeFile(t, "n,f,g\n1,2,3\n"+c.n+","+c.f+",1\n")
		_, err := readAll(t, mustOpen[Row](t, p, Options{}))
		var re *RecordError
		if !errors.As(err, &re) || re.Path != p || re.Line != 3 || !strings.Contains(err.Error(), p+" line 3, "+c.want) {
			t.Errorf("%s,%s: %v, want %q", c.n, c.f, err, c.want)
		}
	}
	p := writeFile(t, "n,f,g\n1,-1.5e3,+.5\n2,5.,-0\n3,NaN,inf\n4,+Infinity,-INF\n")
	got, err := readAll(t, mustOpen[Row](t, p, Options{NonFinite: true}))
	if err != nil || len(got) != 4 || got[0] != (Row{1, -1500, 0.5}) || got[1] != (Row{2, 5, 0}) ||
		got[2].F == got[2].F || got[3].F <= 1e308 || got[3].G >= -1e38 {
		t.Fatalf("NonFinite: %v, %v", got, err)
	}
	if _, err := readAll(t, mustOpen[Row](t, writeFile(t, "n,f,g\n1,0x1p3,1\n"), Options{NonFinite: true})); err == nil {
		t.Fatal("NonFinite read a hexadecimal float")
	}
}

// TestRecordTooLong names the file, the line and the limit, for a record and
// for the header.
func TestRecordTooLong(t *testing.T) {
	type Row struct{ A, B string }
	long := strings.Repeat("x", 5000)
	p := writeFile(t, "a,b\n1,2\n\n3,"+long+"\n5,6\n")
	_, err := readAll(t, mustOpen[Row](t, p, Options{MaxRecordSize: 4096, ChunkSize: 100}))
	if err == nil || !strings.Contains(err.Error(), p+" line 4: a record longer than the limit of 4096 bytes") {
		t.Fatalf("record: %v", err)
	}
	if got, err := readAll(t, mustOpen[Row](t, p, Options{MaxRecordSize: 8192, ChunkSize: 100})); err != nil || len(got) != 3 {
		t.Fatalf("under the limit: %d rows, %v", len(got), err)
	}
	p = writeFile(t, "a,"+long+"\n1,2\n")
	if _, err := Open[Row](p, Options{MaxRecordSize: 4096}); err == nil || !strings.Contains(err.Error(), p+" line 1 (header): a record longer than the limit of 4096 bytes") {
		t.Fatalf("header: %v", err)
	}
}

// TestGrowingFile reads a file as it was at Open: records appended later are
// not read, and an unterminated last record is not read when the file grew
// (a writer is finishing it), but is when it did not.
func TestGrowingFile(t *testing.T) {
	type Row struct {
		User   string
		Amount int64
	}
	for _, c := range []struct{ name, tail string }{{"plain", "u9,12"}, {"quoted", `"u9`}, {"crlf", "u9,12\r"}} {
		p := writeFile(t, "user,amount\nu1,5\nu2,6\n"+c.tail)
		src := mustOpen[Row](t, p, Options{})
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("3\nu10,1\n")
		f.Close()
		got, err := readAll(t, src)
		if err != nil || !slices.Equal(got, []Row{{"u1", 5}, {"u2", 6}}) {
			t.Errorf("%s: grew: %v, %v", c.name, got, err)
		}
	}
	p := writeFile(t, "user,amount\nu1,5\nu9,12")
	got, err := readAll(t, mustOpen[Row](t, p, Options{}))
	if err != nil || !slices.Equal(got, []Row{{"u1", 5}, {"u9", 12}}) {
		t.Fatalf("complete: %v, %v", got, err)
	}
}

// TestColumnsRename reads fields from the columns Options.Columns names, and
// refuses a name no field has.
func TestColumnsRename(t *testing.T) {
	type Row struct {
		Key   string
		Value float64 `weir:"v"`
	}
	p := writeFile(t, "id,amount,user\n1,2.5,a\n2,3,b\n")
	got, err := readAll(t, mustOpen[Row](t, p, Options{Columns: map[string]string{"Key": "user", "v": "AMOUNT"}}))
	if err != nil || !slices.Equal(got, []Row{{"a", 2.5}, {"b", 3}}) {
		t.Fatalf("%v, %v", got, err)
	}
	if _, err := Open[Row](p, Options{Columns: map[string]string{"Key": "user", "Value": "amount"}}); err == nil || !strings.Contains(err.Error(), `["Value"]`) {
		t.Fatalf("unknown field: %v", err)
	}
	if _, err := Open[Row](p, Options{Columns: map[string]string{"Key": "name"}}); err == nil || !strings.Contains(err.Error(), `Key (column "name")`) {
		t.Fatalf("missing column: %v", err)
	}
	type Bad struct {
		A   string
		Pos int32 `weir:",offset"`
	}
	if _, err := Open[Bad](p, Options{}); err == nil || !strings.Contains(err.Error(), "int64") {
		t.Fatalf("int32 offset: %v", err)
	}
}

// TestNotRegularFile refuses a named pipe, whose size is unknown and whose
// data a second open would not see again, instead of reading it as empty.
func TestNotRegularFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip(err)
	}
	if _, err := Open[Three](p, Options{}); err == nil || !strings.Contains(err.Error(), p+" is a named pipe") {
		t.Fatalf("%v", err)
	}
}
