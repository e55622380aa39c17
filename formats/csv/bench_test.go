package csv

import (
	"bufio"
	"context"
	stdcsv "encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// LineItem is shaped like TPC-H lineitem.
type LineItem struct {
	OrderKey      int64     `weir:"l_orderkey"`
	PartKey       int64     `weir:"l_partkey"`
	SuppKey       int64     `weir:"l_suppkey"`
	LineNumber    int32     `weir:"l_linenumber"`
	Quantity      float64   `weir:"l_quantity"`
	ExtendedPrice float64   `weir:"l_extendedprice"`
	Discount      float64   `weir:"l_discount"`
	Tax           float64   `weir:"l_tax"`
	ReturnFlag    string    `weir:"l_returnflag"`
	LineStatus    string    `weir:"l_linestatus"`
	ShipDate      time.Time `weir:"l_shipdate"`
	CommitDate    time.Time `weir:"l_commitdate"`
	ReceiptDate   time.Time `weir:"l_receiptdate"`
	ShipInstruct  string    `weir:"l_shipinstruct"`
	ShipMode      string    `weir:"l_shipmode"`
	Comment       string    `weir:"l_comment"`
}

// lineitemFile writes about mb MiB of lineitem rows into dir.
func lineitemFile(b testing.TB, dir string, mb int) (string, int64) {
	p := filepath.Join(dir, "lineitem.csv")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("l_orderkey,l_partkey,l_suppkey,l_linenumber,l_quantity,l_extendedprice,l_discount,l_tax,l_returnflag,l_linestatus,l_shipdate,l_commitdate,l_receiptdate,l_shipinstruct,l_shipmode,l_comment\n")
	modes := []string{"AIR", "MAIL", "SHIP", "TRUCK", "RAIL"}
	day := time.Date(1992, 1, 1, 0, 0, 0, 0, time.UTC)
	var line []byte
	var n int64
	for i := 0; n < int64(mb)<<20; i++ {
		line = line[:0]
		line = strconv.AppendInt(line, int64(i/4+1), 10)
		line = fmt.Appendf(line, ",%d,%d,%d,%d,%.2f,0.0%d,0.0%d,%c,%c,", i*7%200000, i*13%10000, i%4+1, i%50+1, float64(i%100000)*1.37, i%10, i%8, "NRA"[i%3], "OF"[i%2])
		d := day.AddDate(0, 0, i%2500)
		line = d.AppendFormat(line, time.DateOnly)
		line = append(line, ',')
		line = d.AddDate(0, 0, 30).AppendFormat(line, time.DateOnly)
		line = append(line, ',')
		line = d.AddDate(0, 0, 7).AppendFormat(line, time.DateOnly)
		line = fmt.Appendf(line, ",DELIVER IN PERSON,%s,\"carefully, final deposits %d\"\n", modes[i%5], i%977)
		w.Write(line)
		n += int64(len(line))
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	st, _ := os.Stat(p)
	return p, st.Size()
}

// BenchmarkParseLineItem parses ~50 MB of lineitem into structs, one split.
func BenchmarkParseLineItem(b *testing.B) {
	p, size := lineitemFile(b, b.TempDir(), 50)
	src := mustOpen[LineItem](b, p, Options{SplitSize: 1 << 40})
	splits, _ := src.Splits(context.Background())
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	rows := 0
	for b.Loop() {
		rows = 0
		for _, sp := range splits {
			if err := src.Read(context.Background(), sp, func(batch []LineItem) error { rows += len(batch); return nil }); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(rows), "rows/op")
}

// BenchmarkEncodingCSV is the baseline: encoding/csv with ReuseRecord over the
// same file, splitting fields only (no typed parsing).
func BenchmarkEncodingCSV(b *testing.B) {
	p, size := lineitemFile(b, b.TempDir(), 50)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		f, _ := os.Open(p)
		r := stdcsv.NewReader(bufio.NewReaderSize(f, 1<<20))
		r.ReuseRecord = true
		for {
			_, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		f.Close()
	}
}

// BenchmarkWriteLineItem writes ~50 MB of lineitem rows.
func BenchmarkWriteLineItem(b *testing.B) {
	p, size := lineitemFile(b, b.TempDir(), 50)
	var rows []LineItem
	src := mustOpen[LineItem](b, p, Options{})
	rows, err := readAll(b, src)
	if err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(b.TempDir(), "out.csv")
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w, err := NewSink[LineItem](out, Options{}).Create(context.Background(), 0, 1)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < len(rows); i += 1024 {
			w.Write(rows[i:min(i+1024, len(rows))])
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		if err := w.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}

func TestParseAllocs(t *testing.T) {
	p, _ := lineitemFile(t, t.TempDir(), 2)
	src := mustOpen[LineItem](t, p, Options{})
	splits, _ := src.Splits(context.Background())
	rows := 0
	allocs := testing.AllocsPerRun(2, func() {
		rows = 0
		src.Read(context.Background(), splits[0], func(b []LineItem) error { rows += len(b); return nil })
	})
	// Per Read: file, buffer, batch, decoder; then one 64 KiB string slab per
	// ~64 KiB of strings: far fewer than one per record.
	if perRow := allocs / float64(rows); rows < 10000 || perRow > 0.02 {
		t.Fatalf("%v allocs for %d rows (%.4f per row)", allocs, rows, perRow)
	}
	t.Logf("%v allocs for %d rows", allocs, rows)
}

func TestWriteAllocs(t *testing.T) {
	p, _ := lineitemFile(t, t.TempDir(), 1)
	rows, err := readAll(t, mustOpen[LineItem](t, p, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewSink[LineItem](filepath.Join(t.TempDir(), "o.csv"), Options{}).Create(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	w.Write(rows[:10]) // warm the line buffer
	if allocs := testing.AllocsPerRun(3, func() { w.Write(rows) }); allocs != 0 {
		t.Fatalf("Write of %d rows: %v allocs", len(rows), allocs)
	}
}

// BenchmarkReadEvents reads 1M short records shaped like window-stats'
// input (a key, an epoch-milliseconds time, an integer amount) with a
// Reader, as a stream source does.
func BenchmarkReadEvents(b *testing.B) {
	p := filepath.Join(b.TempDir(), "events.csv")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("user,ts,amount\n")
	for i := range 1_000_000 {
		fmt.Fprintf(w, "u%d,%d,%d\n", i*7919%1000, 1_700_000_000_000+i, i*31%1000)
	}
	w.Flush()
	f.Close()
	type event struct {
		Key    string  `weir:"user"`
		Time   int64   `weir:"ts"`
		Value  float64 `weir:"amount"`
		Offset int64   `weir:",offset"`
	}
	src := mustOpen[event](b, p, Options{SplitSize: 1 << 40})
	splits, _ := src.Splits(context.Background())
	st, _ := os.Stat(p)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		r, err := src.NewReader(splits[0])
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := r.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
		r.Close()
	}
}
