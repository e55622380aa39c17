package arrow

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// foreignFile writes, with arrow-go alone, a file of types the sink never
// writes.
func foreignFile(t *testing.T) string {
	t.Helper()
	_, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "order_key", Type: arrow.PrimitiveTypes.Uint32},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "day64", Type: arrow.FixedWidthTypes.Date64},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "America/New_York"}},
		{Name: "naive", Type: &arrow.TimestampType{Unit: arrow.Second}},
		{Name: "price", Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}, Nullable: true},
		{Name: "comment", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "blob", Type: arrow.BinaryTypes.LargeBinary, Nullable: true},
		{Name: "small", Type: arrow.PrimitiveTypes.Int8},
		{Name: "ignored", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	p := filepath.Join(t.TempDir(), "foreign.arrow")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for batch := range 2 {
		for i := range 3 {
			k := batch*3 + i
			b.Field(0).(*array.Uint32Builder).Append(uint32(4000000000 + k))
			if k == 1 {
				b.Field(1).(*array.Date32Builder).AppendNull()
				b.Field(5).(*array.Decimal128Builder).AppendNull()
				b.Field(6).(*array.LargeStringBuilder).AppendNull()
				b.Field(7).(*array.BinaryBuilder).AppendNull()
			} else {
				b.Field(1).(*array.Date32Builder).Append(arrow.Date32(19000 + k))
				b.Field(5).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(-12345 + k)))
				b.Field(6).(*array.LargeStringBuilder).Append(strings.Repeat("ü", k))
				b.Field(7).(*array.BinaryBuilder).Append([]byte{byte(k), 0})
			}
			b.Field(2).(*array.Date64Builder).Append(arrow.Date64(86400000 * int64(k)))
			b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(1700000000000 + int64(k)))
			b.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(k))
			b.Field(8).(*array.Int8Builder).Append(int8(-k))
			b.Field(9).(*array.Float64Builder).Append(0.5)
		}
		rec := b.NewRecordBatch()
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

type Foreign struct {
	OrderKey int64
	Day      *time.Time
	Day64    time.Time
	At       time.Time
	Naive    time.Time
	Price    *float64
	Comment  *string
	Blob     []byte
	Small    int64
}

func TestForeignTypes(t *testing.T) {
	p := foreignFile(t)
	src, err := Open[Foreign](p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 6 {
		t.Fatalf("%d rows", len(got))
	}
	ny, _ := time.LoadLocation("America/New_York")
	for k, r := range got {
		if r.OrderKey != int64(4000000000+k) || r.Small != int64(-k) {
			t.Fatalf("row %d ints: %+v", k, r)
		}
		if !r.Day64.Equal(time.Unix(86400*int64(k), 0)) || r.Day64.Location() != time.UTC {
			t.Fatalf("row %d day64 %v", k, r.Day64)
		}
		if at := time.UnixMilli(1700000000000 + int64(k)); !r.At.Equal(at) || r.At.Location().String() != ny.String() {
			t.Fatalf("row %d at %v", k, r.At)
		}
		if !r.Naive.Equal(time.Unix(int64(k), 0)) || r.Naive.Location() != time.UTC {
			t.Fatalf("row %d naive %v", k, r.Naive)
		}
		if k == 1 {
			if r.Day != nil || r.Price != nil || r.Comment != nil || r.Blob != nil {
				t.Fatalf("row 1 not null: %+v", r)
			}
			continue
		}
		if want := time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 19000+k); !r.Day.Equal(want) {
			t.Fatalf("row %d day %v want %v", k, *r.Day, want)
		}
		if want := float64(-12345+k) / 100; *r.Price != want {
			t.Fatalf("row %d price %v want %v", k, *r.Price, want)
		}
		if *r.Comment != strings.Repeat("ü", k) || string(r.Blob) != string([]byte{byte(k), 0}) {
			t.Fatalf("row %d text %q %v", k, *r.Comment, r.Blob)
		}
	}
}

func TestErrors(t *testing.T) {
	p := foreignFile(t)
	check := func(err error, want ...string) {
		t.Helper()
		if err == nil {
			t.Fatalf("no error, want %q", want)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("error %q lacks %q", err, w)
			}
		}
		if !strings.HasPrefix(err.Error(), "formats/arrow: ") {
			t.Fatalf("error %q lacks the package", err)
		}
	}
	_, err := Open[struct{ Missing int64 }](p)
	check(err, "Missing", p)
	_, err = Open[struct{ Comment int64 }](p)
	check(err, "comment", "large_utf8", "Comment")
	// Range and nulls are checked per value, on Read.
	src, err := Open[struct{ OrderKey int32 }](p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = readAll(t, src)
	check(err, p, "order_key", "overflows int32")
	src2, err := Open[struct{ Day time.Time }](p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = readAll(t, src2)
	check(err, p, "column day", "row 1: null")
	src3, _ := Open[struct{ Small uint8 }](p)
	_, err = readAll(t, src3)
	check(err, "small", "row 1: -1 overflows uint8")
	_, err = Open[struct{ A int }](filepath.Join(t.TempDir(), "none.arrow"))
	check(err, "none.arrow")
	// Cancelled.
	srcOK, _ := Open[Foreign](p)
	splits, _ := srcOK.Splits(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := srcOK.Read(ctx, splits[0], func([]Foreign) error { return nil }); err != context.Canceled {
		t.Fatalf("cancelled: %v", err)
	}
}

// TestCorrupt truncates and damages a file: every outcome is an error naming
// the file or a successful read, never a panic.
func TestCorrupt(t *testing.T) {
	dp, _ := dictFile(t)
	corrupt(t, foreignFile(t), func(p string) error {
		src, err := Open[Foreign](p)
		if err == nil {
			_, err = readAll(t, src)
		}
		return err
	})
	corrupt(t, dp, func(p string) error {
		src, err := Open[Dict](p)
		if err == nil {
			_, err = readAll(t, src)
		}
		return err
	})
}

// corrupt damages the file at p in many ways and calls read on each copy.
func corrupt(t *testing.T, p string, read func(string) error) {
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.arrow")
	try := func(b []byte) {
		t.Helper()
		os.WriteFile(bad, b, 0o644)
		err := read(bad)
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "bad.arrow") {
			t.Fatalf("error without the file: %v", err)
		}
	}
	for n := 0; n < len(data); n += 1 + n/8 {
		try(data[:n])
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 * corruptScale {
		b := append([]byte(nil), data...)
		for range 1 + rng.IntN(4) {
			b[rng.IntN(len(b))] = byte(rng.Uint32())
		}
		try(b)
	}
	try([]byte("ARROW1\x00\x00garbage"))
	try(nil)
}

func TestStatsAndSplits(t *testing.T) {
	p := foreignFile(t)
	src, err := Open[Foreign](p)
	if err != nil {
		t.Fatal(err)
	}
	splits, _ := src.Splits(context.Background())
	if len(splits) != 2 || !strings.Contains(splits[1].String(), "record batch 1") || splits[0].Size() <= 0 {
		t.Fatalf("splits %v", splits)
	}
	st, _ := src.Stats(context.Background())
	fi, _ := os.Stat(p)
	if st.Bytes != fi.Size() || st.Rows != -1 {
		t.Fatalf("stats %+v", st)
	}
}

// corruptScale multiplies the damaged files TestCorrupt tries.
var corruptScale = 1

// TestCompressed reads files whose bodies arrow-go compressed with LZ4 and Zstd.
func TestCompressed(t *testing.T) {
	type Row struct {
		K int64
		S string
	}
	schema, err := Schema[Row]()
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []ipc.Option{ipc.WithLZ4(), ipc.WithZstd()} {
		p := filepath.Join(t.TempDir(), "c.arrow")
		f, _ := os.Create(p)
		w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema), opt)
		if err != nil {
			t.Fatal(err)
		}
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		var want []Row
		for i := range 1000 {
			r := Row{int64(i % 7), strings.Repeat("s", i%13)}
			want = append(want, r)
			b.Field(0).(*array.Int64Builder).Append(r.K)
			b.Field(1).(*array.StringBuilder).Append(r.S)
		}
		rec := b.NewRecordBatch()
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		b.Release()
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		src, err := Open[Row](p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAll(t, src)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d rows", len(got))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("row %d: %v want %v", i, got[i], want[i])
			}
		}
	}
}

// dictFile writes a dictionary-encoded string column with arrow-go alone and
// returns the values written (nil for null).
func dictFile(t *testing.T) (string, []*string) {
	t.Helper()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	schema := arrow.NewSchema([]arrow.Field{{Name: "mode", Type: dt, Nullable: true}}, nil)
	p := filepath.Join(t.TempDir(), "dict.arrow")
	f, _ := os.Create(p)
	defer f.Close()
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	modes := []string{"AIR", "MAIL", "", "SHIP"}
	var want []*string
	for i := range 100 {
		if i%9 == 0 {
			b.Field(0).(*array.BinaryDictionaryBuilder).AppendNull()
			want = append(want, nil)
			continue
		}
		m := modes[i%len(modes)]
		if err := b.Field(0).(*array.BinaryDictionaryBuilder).AppendString(m); err != nil {
			t.Fatal(err)
		}
		want = append(want, &m)
	}
	rec := b.NewRecordBatch()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return p, want
}

type Dict struct{ Mode *string }

// TestDictionary reads a dictionary-encoded string column.
func TestDictionary(t *testing.T) {
	p, want := dictFile(t)
	src, err := Open[Dict](p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows", len(got))
	}
	for i := range got {
		if !ptrEq(got[i].Mode, want[i]) {
			t.Fatalf("row %d: %v want %v", i, got[i].Mode, want[i])
		}
	}
}
