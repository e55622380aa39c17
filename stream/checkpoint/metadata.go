package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"strings"

	"github.com/weirdata/weir/internal/wire"
)

// The metadata file, version 2, as Flink's _metadata (Checkpoints.
// storeCheckpointMetadata): the magic "weirckpt", uvarint version, then
//
//	kind byte | varint id | varint timestamp | finished byte (0, 1)
//	shared byte: where shared files are (0: the storage's shared directory,
//	  "../shared"; 1: the snapshot's own "shared", as in a savepoint)
//	string fingerprint (version 2; version 1, still read, has none)
//	uvarint operator count, per operator:
//	  string id | string name | string kind (version 2) | uvarint parallelism | uvarint max parallelism
//	  coordinator: byte (0: nil, 1: present) [| uvarint length | bytes]
//	  uvarint subtask count, per subtask:
//	    state file ref | in-flight file ref
//	    uvarint shared count, per shared file: string name | uvarint length | CRC-32C (4 bytes LE)
//	    varint watermark (version 2; version 1 has none: math.MinInt64)
//
// where a string is a uvarint length and its bytes, and a file ref is a byte
// (0: nil, 1: a file) followed for a file by its string name, uvarint length
// and CRC-32C (4 bytes, little-endian). The file ends with the CRC-32C of
// everything before it (4 bytes, little-endian). Files are named relative
// to the snapshot's directory.
const (
	metadataMagic   = "weirckpt"
	metadataVersion = 2
	// MetadataFile is the name of a snapshot's metadata file in its directory.
	MetadataFile = "_metadata"
	// metadataTemp is the metadata being written, renamed to MetadataFile
	// once durable.
	metadataTemp = "_metadata.tmp"
	sharedDir    = "shared"
	// maxMetadata bounds the metadata file a reader accepts.
	maxMetadata = 1 << 30
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt is wrapped by the errors for a snapshot that its writer could
// not have left: bad metadata, a missing, truncated or changed file.
var ErrCorrupt = errors.New("checkpoint: corrupt snapshot")

// CorruptError says which file of a snapshot is damaged and how.
type CorruptError struct {
	// Path is the damaged file, or the directory a file is missing from.
	Path   string
	Reason string
}

func (e *CorruptError) Error() string { return "checkpoint: " + e.Path + ": " + e.Reason }

// Is makes errors.Is(err, ErrCorrupt) hold.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

func corrupt(path, format string, args ...any) error {
	return &CorruptError{Path: path, Reason: fmt.Sprintf(format, args...)}
}

// fileRef is a file of a snapshot as its metadata names it.
type fileRef struct {
	Name string
	Size int64
	CRC  uint32
}

// subtaskMeta is the metadata of one subtask: its files.
type subtaskMeta struct {
	State, InFlight *fileRef
	Shared          []fileRef
	Watermark       int64
}

// operatorMeta is the metadata of one operator.
type operatorMeta struct {
	ID, Name, Kind              string
	Parallelism, MaxParallelism int
	Coordinator                 []byte
	Finished                    bool
	Subtasks                    []subtaskMeta
}

// metadata is the decoded metadata file of a snapshot.
type metadata struct {
	ID        int64
	Kind      Kind
	Timestamp int64
	Finished  bool
	// OwnShared says shared files are in the snapshot's own directory.
	OwnShared   bool
	Fingerprint string
	Operators   []operatorMeta
}

// encodeMetadata returns the metadata file of m.
func encodeMetadata(m *metadata) []byte {
	b := append([]byte(nil), metadataMagic...)
	b = binary.AppendUvarint(b, metadataVersion)
	b = append(b, byte(m.Kind))
	b = binary.AppendVarint(b, m.ID)
	b = binary.AppendVarint(b, m.Timestamp)
	b = append(b, boolByte(m.Finished), boolByte(m.OwnShared))
	b = appendString(b, m.Fingerprint)
	b = binary.AppendUvarint(b, uint64(len(m.Operators)))
	for _, op := range m.Operators {
		b = appendString(b, op.ID)
		b = appendString(b, op.Name)
		b = appendString(b, op.Kind)
		b = binary.AppendUvarint(b, uint64(op.Parallelism))
		b = binary.AppendUvarint(b, uint64(op.MaxParallelism))
		// flags: 1 a coordinator state follows, 2 the operator finished
		flags := boolByte(op.Finished) << 1
		if op.Coordinator == nil {
			b = append(b, flags)
		} else {
			b = append(b, flags|1)
			b = binary.AppendUvarint(b, uint64(len(op.Coordinator)))
			b = append(b, op.Coordinator...)
		}
		b = binary.AppendUvarint(b, uint64(len(op.Subtasks)))
		for _, st := range op.Subtasks {
			b = appendRef(b, st.State)
			b = appendRef(b, st.InFlight)
			b = binary.AppendUvarint(b, uint64(len(st.Shared)))
			for _, f := range st.Shared {
				b = appendFile(b, f)
			}
			b = binary.AppendVarint(b, st.Watermark)
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendRef(b []byte, f *fileRef) []byte {
	if f == nil {
		return append(b, 0)
	}
	return appendFile(append(b, 1), *f)
}

func appendFile(b []byte, f fileRef) []byte {
	b = appendString(b, f.Name)
	b = binary.AppendUvarint(b, uint64(f.Size))
	return binary.LittleEndian.AppendUint32(b, f.CRC)
}

// decodeMetadata parses a metadata file; path names it in errors.
func decodeMetadata(path string, b []byte) (*metadata, error) {
	if len(b) < len(metadataMagic)+4 {
		return nil, corrupt(path, "truncated: %d bytes", len(b))
	}
	if string(b[:len(metadataMagic)]) != metadataMagic {
		return nil, corrupt(path, "not a weir snapshot metadata file")
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, corrupt(path, "checksum mismatch")
	}
	d := mdec{wire.Decoder{B: body[len(metadataMagic):]}}
	v := d.Uvarint()
	if d.Err == nil && (v < 1 || v > metadataVersion) {
		return nil, fmt.Errorf("checkpoint: %s: metadata version %d, this weir reads versions 1 to %d", path, v, metadataVersion)
	}
	m := &metadata{}
	m.Kind = Kind(d.Byte())
	m.ID = d.Varint()
	m.Timestamp = d.Varint()
	m.Finished = d.Bool()
	m.OwnShared = d.Bool()
	if v >= 2 {
		m.Fingerprint = d.LenString()
	}
	if d.Err == nil && m.Kind > Savepoint {
		d.Fail("kind %d", m.Kind)
	}
	nops := d.Count()
	for i := 0; i < nops && d.Err == nil; i++ {
		var op operatorMeta
		op.ID = d.LenString()
		op.Name = d.LenString()
		if v >= metadataVersion {
			op.Kind = d.LenString()
		}
		op.Parallelism = d.Int()
		op.MaxParallelism = d.Int()
		flags := d.Byte()
		if d.Err == nil && flags > 3 {
			d.Fail("operator %q flags %d", op.ID, flags)
		}
		op.Finished = flags&2 != 0
		if flags&1 != 0 {
			op.Coordinator = append([]byte{}, d.Bytes(d.Uvarint())...)
		}
		n := d.Count()
		if d.Err == nil && n != op.Parallelism {
			d.Fail("operator %q of parallelism %d has %d subtasks", op.ID, op.Parallelism, n)
		}
		for j := 0; j < n && d.Err == nil; j++ {
			var st subtaskMeta
			st.State = d.ref()
			st.InFlight = d.ref()
			ns := d.Count()
			for k := 0; k < ns && d.Err == nil; k++ {
				f := d.file()
				if d.Err == nil && !validName(f.Name) {
					d.Fail("shared file name %q", f.Name)
				}
				st.Shared = append(st.Shared, f)
			}
			st.Watermark = math.MinInt64
			if v >= metadataVersion {
				st.Watermark = d.Varint()
			}
			op.Subtasks = append(op.Subtasks, st)
		}
		m.Operators = append(m.Operators, op)
	}
	if d.Err == nil && len(d.B) != 0 {
		d.Fail("%d bytes after the operators", len(d.B))
	}
	if d.Err != nil {
		return nil, corrupt(path, "bad metadata: %v", d.Err)
	}
	return m, nil
}

// validName reports whether name can name a file of a snapshot's directory
// or of the shared directory: a plain name, not hidden, not ours.
func validName(name string) bool {
	return name != "" && len(name) <= 255 && !strings.ContainsAny(name, "/\\\x00") &&
		name[0] != '.' && name != MetadataFile && name != metadataTemp && name != sharedDir
}

// mdec reads metadata fields, keeping the first error.
type mdec struct{ wire.Decoder }

func (d *mdec) file() fileRef {
	var f fileRef
	f.Name = d.LenString()
	size := d.Uvarint()
	if size > 1<<62 {
		d.Fail("file size %d", size)
	}
	f.Size = int64(size)
	if sum := d.Bytes(4); d.Err == nil {
		f.CRC = binary.LittleEndian.Uint32(sum)
	}
	return f
}

func (d *mdec) ref() *fileRef {
	if !d.Bool() || d.Err != nil {
		return nil
	}
	f := d.file()
	if d.Err == nil && !validName(f.Name) {
		d.Fail("file name %q", f.Name)
	}
	return &f
}
