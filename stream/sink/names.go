package sink

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// The marks that end the hidden names of a part before it is committed.
const (
	inProgressMark = ".inprogress"
	pendingMark    = ".pending"
)

// partName is the committed name of a subtask's part.
func (c *config) partName(subtask int, counter uint64) string {
	return c.names.PartPrefix + "-" + strconv.Itoa(subtask) + "-" + strconv.FormatUint(counter, 10) + c.names.PartSuffix
}

func inProgressPath(dir, name string) string { return filepath.Join(dir, "."+name+inProgressMark) }
func pendingPath(dir, name string) string    { return filepath.Join(dir, "."+name+pendingMark) }

// partKind tells what a file of the directory is to the sink.
type partKind int

const (
	notPart partKind = iota
	inProgress
	pending
	committed
)

// parsePart reads a file name of the sink's parts: "name" (committed),
// ".name.pending", ".name.inprogress", or a bulk format's temporary file of
// the in-progress name, "..name.inprogress.tmp-*", where name is
// prefix-<subtask>-<counter>suffix. It returns the subtask, the counter and
// the kind, or notPart.
func (c *config) parsePart(file string) (int, uint64, partKind) {
	rest, hidden := strings.CutPrefix(file, ".")
	rest = strings.TrimPrefix(rest, ".") // the prefix never starts with a dot
	rest, ok := strings.CutPrefix(rest, c.names.PartPrefix+"-")
	if !ok {
		return 0, 0, notPart
	}
	subEnd := 0
	for subEnd < len(rest) && rest[subEnd] >= '0' && rest[subEnd] <= '9' {
		subEnd++
	}
	sub, err := strconv.Atoi(rest[:subEnd])
	if err != nil || subEnd >= len(rest) || rest[subEnd] != '-' {
		return 0, 0, notPart
	}
	rest = rest[subEnd+1:]
	digits := 0
	for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
		digits++
	}
	// a suffix may start with digits: try the longest counter first
	for k := digits; k > 0; k-- {
		counter, err := strconv.ParseUint(rest[:k], 10, 64)
		if err != nil {
			continue
		}
		tail, ok := strings.CutPrefix(rest[k:], c.names.PartSuffix)
		if !ok {
			continue
		}
		switch {
		case !hidden && tail == "":
			return sub, counter, committed
		case !hidden:
		case tail == pendingMark && file[1] != '.':
			return sub, counter, pending
		case tail == inProgressMark || strings.HasPrefix(tail, inProgressMark+".tmp-"):
			return sub, counter, inProgress
		}
	}
	return 0, 0, notPart
}

// stateVersion starts an encoded writer state.
const stateVersion = 1

// encodeState encodes a writer's state: the subtask and the next part
// counter.
func encodeState(subtask int, next uint64) []byte {
	b := []byte{stateVersion}
	b = binary.AppendUvarint(b, uint64(subtask))
	return binary.AppendUvarint(b, next)
}

// errBadState reports a state that does not decode.
var errBadState = errors.New("stream/sink: malformed writer state")

// decodeState decodes what encodeState encoded.
func decodeState(b []byte) (subtask int, next uint64, err error) {
	if len(b) == 0 || b[0] != stateVersion {
		return 0, 0, errBadState
	}
	b = b[1:]
	s, n := binary.Uvarint(b)
	if n <= 0 || s > 1<<31 {
		return 0, 0, errBadState
	}
	b = b[n:]
	next, n = binary.Uvarint(b)
	if n <= 0 || n != len(b) {
		return 0, 0, errBadState
	}
	return int(s), next, nil
}

// errorf formats an error of the sink about a file.
func errorf(op, file string, err error) error {
	return fmt.Errorf("stream/sink: %s %s: %w", op, file, err)
}
