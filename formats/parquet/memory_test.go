package parquet

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"
)

// TestReadMemory checks the decode buffers a split declares: at least the
// stored bytes of a small row group's chunks, more for more columns, and
// bounded per column by pages, not by the row group, for a large one.
func TestReadMemory(t *testing.T) {
	type wide struct {
		A int64  `parquet:"a"`
		B string `parquet:"b"`
		C int64  `parquet:"c"`
	}
	type narrow struct {
		A int64 `parquet:"a"`
	}
	for _, rows := range []int{1000, 400_000} {
		path := filepath.Join(t.TempDir(), "w.parquet")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w := pq.NewGenericWriter[wide](f, pq.Compression(&pq.Uncompressed))
		batch := make([]wide, rows)
		for i := range batch {
			batch[i] = wide{A: int64(i), B: strings.Repeat("y", 8) + string(rune('a'+i%26)), C: int64(i) * 7}
		}
		if _, err := w.Write(batch); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		ws, err := Open[wide](path)
		if err != nil {
			t.Fatal(err)
		}
		ns, err := Open[narrow](path)
		if err != nil {
			t.Fatal(err)
		}
		wsp, _ := ws.Splits(context.Background())
		nsp, _ := ns.Splits(context.Background())
		if len(wsp) != 1 || len(nsp) != 1 {
			t.Fatalf("%d and %d splits, want one row group", len(wsp), len(nsp))
		}
		wm, nm := ws.ReadMemory(wsp[0]), ns.ReadMemory(nsp[0])
		t.Logf("%d rows: %d stored bytes, ReadMemory %d (3 columns), %d (1 column)", rows, wsp[0].Size(), wm, nm)
		if nm <= 0 || wm <= nm {
			t.Errorf("%d rows: ReadMemory %d for 3 columns, %d for 1", rows, wm, nm)
		}
		if rows == 1000 && wm < wsp[0].Size() {
			t.Errorf("ReadMemory %d below the %d stored bytes of a small row group", wm, wsp[0].Size())
		}
		perCol := int64(readBufferBytes+4*maxPageBytes) + int64(DefaultBatchRows)*8
		if rows > 1000 && (wsp[0].Size() <= 3*maxPageBytes || wm > 3*perCol) {
			t.Errorf("large row group of %d bytes: ReadMemory %d, want at most %d", wsp[0].Size(), wm, 3*perCol)
		}
	}
}
