package parquet

import (
	"fmt"
	"os"
	"testing"
	"unsafe"

	pq "github.com/parquet-go/parquet-go"
)

// internRow has a small dictionary column (interned across chunks), a large
// one (not interned) and a nullable one.
type internRow struct {
	Small string  `parquet:"small,dict"`
	Large string  `parquet:"large,dict"`
	Opt   *string `parquet:"opt,optional,dict"`
}

// TestInternDictionaries: a cursor reading the row groups of a file one
// after another gives every row its value (against the rows written), and
// equal values of a small dictionary share their bytes across row groups;
// a dictionary over internValues values is not interned.
func TestInternDictionaries(t *testing.T) {
	const groups, perGroup = 5, 3000
	rows := make([]internRow, groups*perGroup)
	for i := range rows {
		g := i / perGroup
		rows[i].Small = []string{"AIR", "MAIL", "SHIP", "RAIL"}[(i+g)%4] // another first value per group
		rows[i].Large = fmt.Sprintf("v%04d", i%(internValues+100))
		if i%3 != 0 {
			s := []string{"x", "yy"}[i%2]
			rows[i].Opt = &s
		}
	}
	path := writeGeneric(t, "intern.parquet", rows, pq.PageBufferSize(2048), pq.MaxRowsPerRowGroup(perGroup))
	src, err := Open[struct {
		Small string  `weir:"small"`
		Large string  `weir:"large"`
		Opt   *string `weir:"opt"`
	}](path)
	if err != nil {
		t.Fatal(err)
	}
	f := src.files[0]
	if len(f.pf.RowGroups()) != groups {
		t.Fatalf("%d row groups, want %d", len(f.pf.RowGroups()), groups)
	}
	osf, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer osf.Close()
	for ci, name := range []string{"small", "large", "opt"} {
		var c cursor
		var v vector
		seen := map[string]*byte{} // a value's bytes, first seen
		shared, distinct := 0, 0
		for g := range groups {
			cc := f.pf.RowGroups()[g].ColumnChunks()[f.cols[ci].leaf].(*pq.FileColumnChunk)
			c.open(&f.cols[ci], cc.PagesFrom(osf))
			for at := 0; at < perGroup; at += 1000 {
				if err := c.fill(&v, 1000); err != nil {
					t.Fatalf("%s, group %d: %v", name, g, err)
				}
				got := make([]string, 1000)
				sel := make([]int32, 1000)
				for i := range sel {
					sel[i] = int32(i)
				}
				copyString(&v, sel, unsafe.Pointer(&got[0]), unsafe.Sizeof(""))
				for i, s := range got {
					row := rows[g*perGroup+at+i]
					want := map[string]string{"small": row.Small, "large": row.Large}[name]
					if name == "opt" {
						if v.valid[i] != (row.Opt != nil) {
							t.Fatalf("opt, row %d: valid %v", g*perGroup+at+i, v.valid[i])
						}
						if row.Opt != nil {
							want = *row.Opt
						}
					}
					if s != want {
						t.Fatalf("%s, row %d: %q, want %q", name, g*perGroup+at+i, s, want)
					}
					if s == "" {
						continue
					}
					if p, ok := seen[s]; !ok {
						seen[s] = unsafe.StringData(s)
					} else if p == unsafe.StringData(s) {
						shared++
					} else {
						distinct++
					}
				}
			}
			if err := c.close(); err != nil {
				t.Fatal(err)
			}
		}
		switch {
		case name != "large" && distinct != 0:
			t.Errorf("%s: %d values of later row groups not shared with the first copy (%d shared)", name, distinct, shared)
		case name == "large" && distinct == 0:
			t.Errorf("large: a dictionary of %d values was interned", internValues+100)
		}
	}
}
