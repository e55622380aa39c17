package parquet

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	pq "github.com/parquet-go/parquet-go"
)

type twoCols struct {
	OrderKey int64  `weir:"l_orderkey"`
	Mode     string `weir:"l_shipmode"`
}

// TestProjection checks that a struct naming 2 of lineitem's 16 columns
// reads only those column chunks, and gets the same values as a full read.
func TestProjection(t *testing.T) {
	path := tpchDir + "/lineitem.parquet"
	src, err := Open[twoCols](path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readSource(src)
	if err != nil {
		t.Fatal(err)
	}
	full, err := Open[Lineitem](path)
	if err != nil {
		t.Fatal(err)
	}
	all, err := readSource(full)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(all) {
		t.Fatalf("%d rows, want %d", len(got), len(all))
	}
	for i := range all {
		if got[i] != (twoCols{all[i].OrderKey, all[i].ShipMode}) {
			t.Fatalf("row %d: %+v", i, got[i])
		}
	}
	// The bytes of the two column chunks, from the footer.
	f, _ := os.Open(path)
	defer f.Close()
	st, _ := f.Stat()
	pf, err := pq.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	var chunks int64
	for _, rg := range pf.Metadata().RowGroups {
		for _, c := range rg.Columns {
			if p := c.MetaData.PathInSchema; len(p) == 1 && (p[0] == "l_orderkey" || p[0] == "l_shipmode") {
				chunks += c.MetaData.TotalCompressedSize
			}
		}
	}
	t.Logf("projected read %d bytes (chunks %d), full read %d bytes, file %d", src.BytesRead(), chunks, full.BytesRead(), st.Size())
	if src.BytesRead() > chunks || src.BytesRead() < chunks/2 {
		t.Fatalf("projected read %d bytes; the two chunks hold %d", src.BytesRead(), chunks)
	}
	if full.BytesRead() < st.Size()*9/10 {
		t.Fatalf("full read only %d of %d bytes", full.BytesRead(), st.Size())
	}
}

func TestParallelSources(t *testing.T) {
	// Several instances at once, each on a hash partition of the splits of
	// the same files, as the runtime runs them.
	path, rows := sortedLineitem(t)
	const n = 3
	parts := make([][]shipRow, n)
	done := make(chan error, n)
	for p := range n {
		go func() {
			src, err := Open[shipRow](path, BatchRows(500))
			if err != nil {
				done <- err
				return
			}
			splits, _ := src.Splits(context.Background())
			for i, sp := range splits {
				if i%n != p {
					continue
				}
				if err := src.Read(context.Background(), sp, func(b []shipRow) error {
					parts[p] = append(parts[p], b...)
					return nil
				}); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range n {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	count := map[shipRow]int{}
	for _, r := range rows {
		count[r]++
	}
	total := 0
	for _, part := range parts {
		for _, r := range part {
			count[r]--
			total++
		}
	}
	for r, c := range count {
		if c != 0 {
			t.Fatalf("row %+v off by %d", r, c)
		}
	}
	if total != len(rows) {
		t.Fatalf("%d rows, want %d", total, len(rows))
	}
	_ = filepath.Base(path)
}
