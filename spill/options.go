package spill

import (
	"fmt"

	"github.com/klauspost/compress/s2"
)

// Codec is the compression applied to the payload of each block. The values of
// None, S2 and Zstd are part of the file format (they are stored in every block
// header) and never change.
type Codec uint8

const (
	// DefaultCodec is the zero value; EnsureDefaults replaces it with the codec the
	// measurements in Options' documentation picked.
	DefaultCodec Codec = iota
	// None stores payloads as they are.
	None
	// S2 compresses payloads with github.com/klauspost/compress/s2 (block format).
	S2
	// Zstd compresses payloads with github.com/klauspost/compress/zstd at
	// SpeedFastest, one frame per block, without goroutines.
	Zstd
)

// String returns "default", "none", "s2" or "zstd".
func (c Codec) String() string {
	switch c {
	case DefaultCodec:
		return "default"
	case None:
		return "none"
	case S2:
		return "s2"
	case Zstd:
		return "zstd"
	}
	return fmt.Sprintf("codec(%d)", uint8(c))
}

func (c Codec) valid() bool { return c == None || c == S2 || c == Zstd }

const (
	// DefaultBlockSize is the number of uncompressed payload bytes per block when
	// Options.BlockSize is zero.
	DefaultBlockSize = 256 << 10
	// MinBlockSize and MaxBlockSize bound Options.BlockSize; EnsureDefaults clamps
	// to them.
	MinBlockSize = 64
	MaxBlockSize = 64 << 20
	// MaxRecordSize is the largest record a Writer accepts.
	MaxRecordSize = 1 << 30

	// defaultCodec is what DefaultCodec stands for; see Options.
	defaultCodec = None
)

// Options configures the files of a Space. The zero value is usable.
//
// Default codec: None. The wall time of spilling plus reading back decides it:
//
//	go test -run '^$' -bench BenchmarkCodec -benchtime 2x -count 1 ./spill/
//
// writes 256 MiB through a DiskFS and reads it back, as random printable text
// and as lineitem-like records (BENCHMARKS.md, "Spill codec", has the figures).
// Random printable text does not shrink under either codec (blocks fall back
// to stored), so compressing it only costs CPU. Lineitem-like records shrink
// about 2x (S2) and 3x (zstd), but S2 encodes them more slowly than the page
// cache and the disk take them, so the compressed spill is slower end to end.
// Choose S2 when spill files compete for disk space or the disk is much slower
// than the codec.
type Options struct {
	// Codec compresses block payloads; DefaultCodec means the default above.
	// Readers decode any codec, whatever their Options say: each block names its own.
	Codec Codec
	// BlockSize is the number of uncompressed bytes per block (records never
	// straddle blocks; a larger record gets a block of its own). Zero means
	// DefaultBlockSize; other values are clamped to [MinBlockSize, MaxBlockSize].
	BlockSize int
	// FileSize is how many bytes a spill file grows to before the Space's next
	// Writer starts a new one: Writers created one after another append their
	// runs to the same file, each run a byte range of it, so that many small
	// runs do not mean many files. Zero means DefaultFileSize; a negative value
	// gives every Writer a file of its own.
	FileSize int64
}

// DefaultFileSize is Options.FileSize when it is zero.
const DefaultFileSize = 256 << 20

// EnsureDefaults fills zero fields with their defaults, clamps BlockSize and
// returns o. An unknown codec is kept: Space.Create reports it.
func (o Options) EnsureDefaults() Options {
	if o.Codec == DefaultCodec {
		o.Codec = defaultCodec
	}
	if o.FileSize == 0 {
		o.FileSize = DefaultFileSize
	}
	switch {
	case o.BlockSize <= 0:
		o.BlockSize = DefaultBlockSize
	case o.BlockSize < MinBlockSize:
		o.BlockSize = MinBlockSize
	case o.BlockSize > MaxBlockSize:
		o.BlockSize = MaxBlockSize
	}
	return o
}

// MinBudgetBlockSize is the least block size ForBudget chooses.
const MinBudgetBlockSize = 16 << 10

// ForBudget returns o with a block size chosen for a memory budget of budget
// bytes when o leaves it zero: a 1024th of the budget as a power of two,
// between MinBudgetBlockSize and DefaultBlockSize. Readers and writers hold two
// blocks each, so under a tight budget smaller blocks let a merge read more
// runs at once. A zero or negative budget (none) leaves o as it is.
func (o Options) ForBudget(budget int64) Options {
	if o.BlockSize != 0 || budget <= 0 {
		return o
	}
	b := MinBudgetBlockSize
	for b < DefaultBlockSize && int64(b)*2 <= budget/1024 {
		b *= 2
	}
	o.BlockSize = b
	return o
}

// Bytes one zstd codec state costs: what a fresh encoder or decoder allocates
// while coding its first block (an upper bound of what it holds).
// TestCodecStateMemory measures it and fails when either allocates more.
const (
	zstdEncoderMemory = 1536 << 10
	zstdDecoderMemory = 256 << 10
)

// WriterMemory returns the bytes one open Writer holds: two block buffers (one
// being filled, one being compressed and written in the background), the
// compressed-block buffer and the encoder state. A record larger than BlockSize
// temporarily needs about twice its size on top of this while it is written.
func (o Options) WriterMemory() int64 {
	o = o.EnsureDefaults()
	m := 2 * int64(headerSize+o.BlockSize)
	switch o.Codec {
	case S2:
		m += int64(compressedCap(o.BlockSize))
	case Zstd:
		m += int64(compressedCap(o.BlockSize)) + zstdEncoderMemory
	}
	return m
}

// ReaderMemory returns the bytes one open Reader holds: two block buffers (one
// being consumed, one being read ahead in the background), the compressed-block
// buffer and the decoder state. A block holding a record larger than BlockSize
// temporarily needs about twice the record's size on top of this. The figure
// assumes the file was written with the same Options: a Reader decodes blocks
// of any codec and size, but larger or differently compressed blocks cost more.
func (o Options) ReaderMemory() int64 {
	o = o.EnsureDefaults()
	m := 2 * int64(o.BlockSize)
	switch o.Codec {
	case S2:
		m += int64(compressedCap(o.BlockSize))
	case Zstd:
		m += int64(compressedCap(o.BlockSize)) + zstdDecoderMemory
	}
	return m
}

// compressedCap is the capacity of a buffer that holds a header and any encoding
// of n raw bytes (S2's bound is above zstd's).
func compressedCap(n int) int { return headerSize + s2.MaxEncodedLen(n) + 64 }
