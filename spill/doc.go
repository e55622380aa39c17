// Package spill stores operator data that does not fit in memory in temporary,
// block-structured files. It is a leaf: it imports nothing from weir.
//
// # Model
//
// An operator owns a Space: a set of spill files in an FS (DiskFS in production,
// MemFS and FaultFS in tests). Space.Create returns a Writer that appends records
// (byte strings; AppendKV writes a key/value pair in the form of
// memory.AppendKV) as one run; Writer.Finish returns the run's Handle, which
// Space.Open turns into a Reader that returns the records in the same order.
//
// # Shared files
//
// A run is a byte range of a file (Handle.Name, Offset, DiskBytes). Writers
// created one after another append their runs to the same file, which stays
// open for writing between them until it reaches Options.FileSize, so an
// operator that spills many small runs under a tight budget writes a handful
// of files, not thousands; Writers open at the same time (a hash join's
// partitions) each take a file, and the files are reused by later Writers.
// Readers open the file on their own and read their range from its offset,
// also while a Writer appends to it. A Writer that fails or is aborted leaves
// its file unusable for further runs. A file is removed when the last of its
// runs is removed and no Writer holds it, or by Space.Close; until then the
// bytes of its removed runs stay on disk (a file takes no new run once it
// holds FileSize bytes).
//
// # File format
//
// A file is a sequence of blocks. Each block is a 16-byte header (magic "WS",
// format version, codec, stored length, uncompressed length, CRC-32C of the
// stored payload) followed by the payload, compressed by the block's codec
// (None, S2 or Zstd; a payload that does not shrink is stored as None).
// Uncompressed, a payload is a sequence of records, each uvarint(len) + bytes.
// Records never straddle blocks: a block is cut at a record boundary, and a
// record larger than Options.BlockSize gets a block of its own. A run ends
// after its last block; its record count and size are in the Handle, which the
// Reader checks, so truncation at a block boundary is detected too. Any
// corruption gives an error wrapping ErrCorrupt that names the file and block;
// decoding never panics and never allocates more than the Handle says the file
// holds.
//
// # Asynchronous I/O
//
// A Writer compresses and writes full blocks in a background goroutine
// (write-behind, at most one block in flight while the caller fills the next);
// a Reader reads, checks and decompresses the next block in a background
// goroutine (read-ahead, one block). An error in the background is returned by
// the next call. No goroutine outlives Writer.Finish, Writer.Abort,
// Reader.Close or Space.Close. Block buffers and codec states are recycled, so
// the steady state allocates nothing per record or block. Options.WriterMemory
// and Options.ReaderMemory say how much memory an open Writer or Reader holds,
// so operators can account it.
//
// # Ownership and cleanup
//
// Every file belongs to the Space that created it from Create until
// Space.Remove of its last run or Space.Close, whatever happens to its Writers.
// Writer.Abort (and a failed Finish) drops the Writer's run and removes its file
// unless earlier runs in it are still live. Space.Close aborts open Writers,
// closes open Readers and removes every remaining file; operators call it on
// every exit path (success, error, cancellation), after their goroutines have
// stopped using the Space's Writers and Readers. DiskFS.Close removes the whole
// spill directory as the last resort (e.g. on Ctrl-C). A killed process
// cannot: NewDiskFS first removes the spill directories whose process is gone
// (RemoveStale), told by the flock each live DiskFS holds on a file beside its
// directory.
//
// # Concurrency
//
// FS implementations and Space are safe for concurrent use; a Writer or Reader
// belongs to one goroutine at a time.
package spill
