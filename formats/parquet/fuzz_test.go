package parquet

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpen feeds arbitrary bytes as a Parquet file: Open and Read may fail
// but must not panic.
func FuzzOpen(f *testing.F) {
	for _, name := range []string{"region.parquet", "nation.parquet"} {
		b, err := os.ReadFile(tpchDir + "/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
		f.Add(b[len(b)/3:])
	}
	f.Add([]byte("PAR1PAR1"))
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "fuzz.parquet")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if src, err := Open[Region](path); err == nil {
			_, _ = readSource(src)
		}
		if src, err := Open[Nation](path, Where("n_nationkey", Lt, 10)); err == nil {
			_, _ = readSource(src)
		}
	})
}
