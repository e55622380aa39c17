package spill

import (
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"testing"
)

// TestSteadyStateAllocs proves that appending and reading records, block after
// block, allocates nothing once a Writer or Reader is running: every run covers
// hundreds of blocks, compressed, written, read, checked and decompressed in the
// background goroutines, whose allocations count too. The GC is off while it
// runs: a GC empties sync.Pools (zstd's decoder keeps scratch tables in some),
// and refilling them after a GC is not a per-block cost. Even so the runtime
// now and then allocates for itself (GC mark workers seen in a memory profile),
// so up to maxStray allocations per run pass; one allocation per block would
// show as about 500, one per record as 20000.
func TestSteadyStateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are distorted by the race detector")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	rng := rand.New(rand.NewPCG(12, 13))
	recs := make([][]byte, 1000)
	for i := range recs {
		if i%2 == 0 {
			recs[i] = textRecord(rng, 100)
		} else {
			recs[i] = compressibleRecord(rng, 100)
		}
	}
	const perRun = 20000 // about 500 blocks of 4 KiB
	const maxStray = 2
	for _, c := range codecs {
		t.Run(c.String(), func(t *testing.T) {
			mem := NewMemFS()
			s := NewSpace(mem, "allocs", Options{Codec: c, BlockSize: 4096})
			w, err := s.Create()
			if err != nil {
				t.Fatal(err)
			}
			i := 0
			appendRun := func() {
				for range perRun {
					if err := w.Append(recs[i%len(recs)]); err != nil {
						t.Fatal(err)
					}
					i++
				}
			}
			appendRun() // warm up: codec state and buffers
			// MemFS grows its in-memory file with append; give it room first so
			// that only the Writer's allocations are counted.
			reserveMemFS(mem, w.Name(), 4*perRun*110)
			if a := testing.AllocsPerRun(1, appendRun); a > maxStray {
				t.Errorf("Append: %v allocations in %d records", a, perRun)
			}
			appendRun() // so that the reader never reaches the end while measured
			h, err := w.Finish()
			if err != nil {
				t.Fatal(err)
			}
			r, err := s.Open(h)
			if err != nil {
				t.Fatal(err)
			}
			nextRun := func() {
				for range perRun {
					if _, err := r.Next(); err != nil {
						t.Fatal(err)
					}
				}
			}
			nextRun() // warm up
			if a := testing.AllocsPerRun(1, nextRun); a > maxStray {
				t.Errorf("Next: %v allocations in %d records", a, perRun)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			closeSpace(t, s, mem)
		})
	}
}

func reserveMemFS(m *MemFS, name string, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.files[name]
	nb := make([]byte, len(d.b), len(d.b)+n)
	copy(nb, d.b)
	d.b = nb
}

// TestCodecStateMemory measures the bytes a fresh zstd encoder and decoder
// allocate while coding one block of each size (with the GC having emptied every
// sync.Pool first, so this bounds what they hold) and checks them against the
// figures WriterMemory and ReaderMemory account. S2 keeps no state between calls.
func TestCodecStateMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are distorted by the race detector")
	}
	rng := rand.New(rand.NewPCG(14, 15))
	for _, bs := range []int{4096, DefaultBlockSize, 1 << 20} {
		raw := compressibleRecord(rng, bs)
		comp := make([]byte, 0, compressedCap(bs))
		dst := make([]byte, bs)

		before := allocated()
		e, err := newZstdEncoder()
		if err != nil {
			t.Fatal(err)
		}
		out := e.EncodeAll(raw, comp)
		enc := allocated() - before
		if len(out) >= bs || &out[0] != &comp[:1][0] {
			t.Fatalf("block of %d: encoded to %d bytes, or not in place", bs, len(out))
		}

		before = allocated()
		d, err := newZstdDecoder()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.DecodeAll(out, dst[:0]); err != nil {
			t.Fatal(err)
		}
		dec := allocated() - before
		t.Logf("block %d: zstd encoder allocated %d bytes, decoder %d", bs, enc, dec)
		if enc > zstdEncoderMemory || dec > zstdDecoderMemory {
			t.Errorf("block %d: zstd encoder allocated %d bytes (accounted %d), decoder %d (accounted %d)",
				bs, enc, zstdEncoderMemory, dec, zstdDecoderMemory)
		}
		d.Close()
	}
}

// allocated returns the bytes allocated so far, after two GCs have emptied
// every sync.Pool.
func allocated() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.TotalAlloc)
}
