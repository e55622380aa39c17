package spill

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// Block layout (all integers little endian):
//
//	offset  size  field
//	0       2     magic "WS"
//	2       1     format version (1)
//	3       1     codec of the payload (None, S2, Zstd)
//	4       4     stored (payload) length
//	8       4     uncompressed length (uvarint-framed records)
//	12      4     CRC-32C (Castagnoli) of the stored payload
//	16      ...   payload
const (
	headerSize    = 16
	formatVersion = 1
	magic0        = 'W'
	magic1        = 'S'
	// maxFraming is the longest uvarint that frames a record of at most MaxRecordSize.
	maxFraming = 5
)

// ErrCorrupt is wrapped by every error that reports a malformed spill file: bad
// magic, checksum or lengths, a truncated block, a short file.
var ErrCorrupt = errors.New("spill: corrupt file")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type header struct {
	codec  Codec
	stored int
	raw    int
	crc    uint32
}

func putHeader(b []byte, h header) {
	b[0], b[1], b[2], b[3] = magic0, magic1, formatVersion, byte(h.codec)
	binary.LittleEndian.PutUint32(b[4:], uint32(h.stored))
	binary.LittleEndian.PutUint32(b[8:], uint32(h.raw))
	binary.LittleEndian.PutUint32(b[12:], h.crc)
}

// parseHeader decodes and checks a header against the file's remaining size and
// uncompressed budget. The message does not name file or block; the caller adds them.
func parseHeader(b []byte, remainingDisk, remainingRaw int64) (header, error) {
	if b[0] != magic0 || b[1] != magic1 {
		return header{}, fmt.Errorf("%w: bad magic %02x%02x", ErrCorrupt, b[0], b[1])
	}
	if b[2] != formatVersion {
		return header{}, fmt.Errorf("%w: unknown format version %d", ErrCorrupt, b[2])
	}
	h := header{
		codec:  Codec(b[3]),
		stored: int(binary.LittleEndian.Uint32(b[4:])),
		raw:    int(binary.LittleEndian.Uint32(b[8:])),
		crc:    binary.LittleEndian.Uint32(b[12:]),
	}
	switch {
	case !h.codec.valid():
		return header{}, fmt.Errorf("%w: unknown codec %d", ErrCorrupt, b[3])
	case h.raw == 0:
		return header{}, fmt.Errorf("%w: empty block", ErrCorrupt)
	case int64(h.stored) > remainingDisk:
		return header{}, fmt.Errorf("%w: block of %d bytes exceeds the %d bytes left in the file", ErrCorrupt, h.stored, remainingDisk)
	case int64(h.raw) > remainingRaw || h.raw > MaxRecordSize+maxFraming:
		return header{}, fmt.Errorf("%w: uncompressed length %d exceeds the %d bytes left", ErrCorrupt, h.raw, remainingRaw)
	case h.codec == None && h.stored != h.raw:
		return header{}, fmt.Errorf("%w: stored length %d differs from uncompressed length %d", ErrCorrupt, h.stored, h.raw)
	}
	return h, nil
}

// compressor encodes block payloads for one Writer's background goroutine.
type compressor struct {
	codec Codec
	zenc  *zstd.Encoder
}

var zstdEncoders sync.Pool // of *zstd.Encoder

// zstdWindow is the encoder's window, the default block size.
const zstdWindow = 256 << 10

func newCompressor(c Codec) (compressor, error) {
	if c != Zstd {
		return compressor{codec: c}, nil
	}
	if e, ok := zstdEncoders.Get().(*zstd.Encoder); ok {
		return compressor{codec: c, zenc: e}, nil
	}
	e, err := newZstdEncoder()
	if err != nil {
		return compressor{}, err
	}
	return compressor{codec: c, zenc: e}, nil
}

func newZstdEncoder() (*zstd.Encoder, error) {
	e, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.SpeedFastest),
		zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderCRC(false),      // the block header has a CRC-32C
		zstd.WithWindowSize(zstdWindow), // blocks are frames of their own: a larger window gains little
		zstd.WithLowerEncoderMem(true))  // with the window, ~0.9 MiB of state instead of ~9 MiB
	if err != nil {
		return nil, fmt.Errorf("spill: new zstd encoder: %w", err)
	}
	return e, nil
}

// release returns the codec state to its pool.
func (c *compressor) release() {
	if c.zenc != nil {
		zstdEncoders.Put(c.zenc)
		c.zenc = nil
	}
}

// compress encodes raw into dst[headerSize:] (reusing dst's capacity, grown only
// for blocks larger than the block size) and returns dst holding header and
// payload. It returns false, and nothing, when the codec is None or the payload
// does not shrink: the caller then stores raw as it is (sealRaw).
func (c *compressor) compress(dst, raw []byte) ([]byte, bool) {
	if c.codec == None {
		return nil, false
	}
	if n := compressedCap(len(raw)); cap(dst) < n {
		dst = make([]byte, 0, n)
	}
	var out []byte
	switch c.codec {
	case S2:
		out = s2.Encode(dst[headerSize:cap(dst)], raw)
	case Zstd:
		out = c.zenc.EncodeAll(raw, dst[headerSize:headerSize])
	}
	if len(out) == 0 || len(out) >= len(raw) || &out[0] != &dst[:headerSize+1][headerSize] {
		return nil, false
	}
	dst = dst[:headerSize+len(out)]
	putHeader(dst, header{codec: c.codec, stored: len(out), raw: len(raw), crc: crc32.Checksum(out, castagnoli)})
	return dst, true
}

// sealRaw fills the header room at the front of blk for its payload stored as is.
func sealRaw(blk []byte) {
	payload := blk[headerSize:]
	putHeader(blk, header{codec: None, stored: len(payload), raw: len(payload), crc: crc32.Checksum(payload, castagnoli)})
}

// decompressor decodes block payloads for one Reader's background goroutine.
type decompressor struct {
	zdec *zstd.Decoder
}

var zstdDecoders sync.Pool // of *zstd.Decoder

func (d *decompressor) release() {
	if d.zdec != nil {
		zstdDecoders.Put(d.zdec)
		d.zdec = nil
	}
}

// decompress decodes payload into dst, whose length is the header's uncompressed
// length. It never writes beyond dst and never allocates more than the decoder's
// state.
func (d *decompressor) decompress(codec Codec, dst, payload []byte) error {
	switch codec {
	case None:
		copy(dst, payload)
		return nil
	case S2:
		n, err := s2.DecodedLen(payload)
		if err != nil {
			return fmt.Errorf("%w: s2: %v", ErrCorrupt, err)
		}
		if n != len(dst) {
			return fmt.Errorf("%w: s2 payload decodes to %d bytes, header says %d", ErrCorrupt, n, len(dst))
		}
		if _, err := s2.Decode(dst, payload); err != nil {
			return fmt.Errorf("%w: s2: %v", ErrCorrupt, err)
		}
		return nil
	case Zstd:
		if d.zdec == nil {
			if err := d.initZstd(); err != nil {
				return err
			}
		}
		out, err := d.zdec.DecodeAll(payload, dst[:0])
		if err != nil {
			return fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
		}
		if len(out) != len(dst) || (len(out) > 0 && &out[0] != &dst[0]) {
			return fmt.Errorf("%w: zstd payload decodes to %d bytes, header says %d", ErrCorrupt, len(out), len(dst))
		}
		return nil
	}
	return fmt.Errorf("%w: unknown codec %d", ErrCorrupt, codec)
}

func (d *decompressor) initZstd() error {
	if z, ok := zstdDecoders.Get().(*zstd.Decoder); ok {
		d.zdec = z
		return nil
	}
	z, err := newZstdDecoder()
	if err != nil {
		return err
	}
	d.zdec = z
	return nil
}

func newZstdDecoder() (*zstd.Decoder, error) {
	z, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecodeAllCapLimit(true), // output never exceeds cap(dst)
		zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(MaxRecordSize+maxFraming))
	if err != nil {
		return nil, fmt.Errorf("spill: new zstd decoder: %w", err)
	}
	return z, nil
}

// buffer is a block buffer recycled through bufPool; the pointer keeps pool
// operations free of allocation.
type buffer struct{ b []byte }

var (
	bufPoolMu sync.Mutex
	bufPools  = map[int]*sync.Pool{}
)

// getBuffer returns a buffer of capacity n and length 0, recycled when possible.
func getBuffer(n int) *buffer {
	p := bufPool(n)
	if b, ok := p.Get().(*buffer); ok && cap(b.b) == n {
		b.b = b.b[:0]
		return b
	}
	return &buffer{b: make([]byte, 0, n)}
}

// putBuffer recycles b if its capacity is still n (big records replace buffers).
func putBuffer(b *buffer, n int) {
	if b == nil || cap(b.b) != n {
		return
	}
	bufPool(n).Put(b)
}

func bufPool(n int) *sync.Pool {
	bufPoolMu.Lock()
	defer bufPoolMu.Unlock()
	p := bufPools[n]
	if p == nil {
		p = &sync.Pool{}
		bufPools[n] = p
	}
	return p
}
