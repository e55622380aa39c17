package parquet

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"testing"

	kzstd "github.com/klauspost/compress/zstd"
)

// TestZstdPageEncoder checks that a page round-trips through the Sink's zstd
// codec, and that a fresh encoder allocates at most 8 MiB for it (5 MiB here), not the 20 MiB
// zstd's default window of 8 MiB costs.
func TestZstdPageEncoder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	page := make([]byte, 256<<10)
	for i := range page {
		page[i] = byte('a' + rng.IntN(4)) // compressible, as columns are
	}
	var c zstdCodec
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	e := pageEncoders.New().(*kzstd.Encoder)
	out := e.EncodeAll(page, nil)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
		t.Errorf("a fresh encoder allocated %d bytes for a 256 KiB page, want at most 8 MiB", got)
	}
	if len(out) >= len(page)/2 {
		t.Errorf("compressed %d bytes to %d", len(page), len(out))
	}
	enc, err := c.Encode(nil, page)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := c.Decode(nil, enc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dec, page) {
		t.Fatal("the page did not round-trip")
	}
}
