package sortjoin

import (
	"io"
	"testing"

	"github.com/weirdata/weir/memory"
	"github.com/weirdata/weir/spill"
)

// BenchmarkWriteRun writes one sorted buffer of 64 MiB of 100-byte lines (as
// `weir sort` fills it) as a run to an in-memory file system: the index is in
// key order, so the records are read in random order.
func BenchmarkWriteRun(b *testing.B) {
	data := printableRecords(1, 64<<20)
	m := memory.MustNewManager(memory.Options{})
	buf := newSortBuffer(m, "bench", memory.Unlimited, 0, 0)
	for off := 0; off < len(data); off += 100 {
		if !buf.add(data[off:off+99], nil) {
			b.Fatal("buffer full")
		}
	}
	buf.sort()
	space := spill.NewSpace(discardFS{}, "bench", spill.Options{Codec: spill.None})
	defer space.Close()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		h, err := writeRun(space, "bench", buf, 0, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := space.Remove(h); err != nil {
			b.Fatal(err)
		}
	}
}

// discardFS is a spill.FS whose files discard what is written to them.
type discardFS struct{}

func (discardFS) Create(string) (spill.File, error) { return discardFile{}, nil }
func (discardFS) Open(string) (spill.File, error)   { return discardFile{}, nil }
func (discardFS) Remove(string) error               { return nil }

type discardFile struct{}

func (discardFile) Read([]byte) (int, error)    { return 0, io.EOF }
func (discardFile) Write(p []byte) (int, error) { return len(p), nil }
func (discardFile) Close() error                { return nil }
func (discardFile) Sync() error                 { return nil }
