package parquet

import (
	"sync"

	kzstd "github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// pageWindow is the zstd window of the pages a Sink writes. A page holds at
// most about a page buffer (256 KiB in parquet-go), so a larger window finds
// no more matches, while an encoder keeps a history of twice its window:
// 16 MiB a writer at zstd's default of 8 MiB, none of it in the budget.
const pageWindow = 1 << 20

// pageEncoders are the zstd encoders of all Sinks' pages, shared by writers.
var pageEncoders = sync.Pool{New: func() any {
	e, err := kzstd.NewWriter(nil,
		kzstd.WithEncoderConcurrency(1),
		kzstd.WithEncoderLevel(kzstd.SpeedDefault),
		kzstd.WithWindowSize(pageWindow),
		kzstd.WithZeroFrames(true),
		kzstd.WithEncoderCRC(false),
	)
	if err != nil {
		panic(err) // the options are constants
	}
	return e
}}

// zstdCodec is parquet-go's zstd codec (name, format code, decoding) with
// pages encoded under pageWindow.
type zstdCodec struct{ zstd.Codec }

// Encode compresses src, one page, into dst.
func (c *zstdCodec) Encode(dst, src []byte) ([]byte, error) {
	e := pageEncoders.Get().(*kzstd.Encoder)
	defer pageEncoders.Put(e)
	return e.EncodeAll(src, dst[:0]), nil
}
