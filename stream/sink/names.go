package sink

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
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

// The hidden names end in the writer's nonce, so that two writers of the
// same subtask restored from the same checkpoint (a new attempt and a
// zombie attempt of the old one, on a TaskManager thought lost) never
// write, rename or remove each other's files.
func inProgressPath(dir, name, nonce string) string {
	return filepath.Join(dir, "."+name+inProgressMark+"."+nonce)
}
func pendingPath(dir, name, nonce string) string {
	return filepath.Join(dir, "."+name+pendingMark+"."+nonce)
}

// nonceLen is the length of a writer's nonce: 16 lower-case hex digits.
const nonceLen = 16

// newNonce returns a writer's nonce.
func newNonce() string { return fmt.Sprintf("%016x", rand.Uint64()) }

// isNonce says whether s is a writer's nonce.
func isNonce(s string) bool {
	if len(s) != nonceLen {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// cutNonce splits ".<nonce>" off the front of s, if s starts with one.
func cutNonce(s string) (nonce, rest string, ok bool) {
	if len(s) > nonceLen && s[0] == '.' && isNonce(s[1:1+nonceLen]) {
		return s[1 : 1+nonceLen], s[1+nonceLen:], true
	}
	return "", s, false
}

// partKind tells what a file of the directory is to the sink.
type partKind int

const (
	notPart partKind = iota
	inProgress
	pending
	committed
)

// parsePart reads a file name of the sink's parts: "name" (committed),
// ".name.pending.<nonce>", ".name.inprogress.<nonce>", or a bulk format's
// temporary file of the in-progress name, "..name.inprogress.<nonce>.tmp-*",
// where name is prefix-<subtask>-<counter>suffix and nonce the writer's (the
// names without a nonce are those of older versions). It returns the
// subtask, the counter and the kind, or notPart.
func (c *config) parsePart(file string) (int, uint64, partKind) {
	sub, counter, k, _ := c.parsePartNonce(file)
	return sub, counter, k
}

// parsePartNonce is parsePart with the hidden file's nonce ("" for a
// committed part or a name without one).
func (c *config) parsePartNonce(file string) (int, uint64, partKind, string) {
	rest, hidden := strings.CutPrefix(file, ".")
	rest = strings.TrimPrefix(rest, ".") // the prefix never starts with a dot
	rest, ok := strings.CutPrefix(rest, c.names.PartPrefix+"-")
	if !ok {
		return 0, 0, notPart, ""
	}
	subEnd := 0
	for subEnd < len(rest) && rest[subEnd] >= '0' && rest[subEnd] <= '9' {
		subEnd++
	}
	sub, err := strconv.Atoi(rest[:subEnd])
	if err != nil || subEnd >= len(rest) || rest[subEnd] != '-' {
		return 0, 0, notPart, ""
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
		if !hidden {
			if tail == "" {
				return sub, counter, committed, ""
			}
			continue
		}
		if after, ok := strings.CutPrefix(tail, pendingMark); ok && file[1] != '.' {
			if after == "" {
				return sub, counter, pending, ""
			}
			if nonce, end, ok := cutNonce(after); ok && end == "" {
				return sub, counter, pending, nonce
			}
		}
		if after, ok := strings.CutPrefix(tail, inProgressMark); ok {
			nonce, after, _ := cutNonce(after)
			if after == "" || strings.HasPrefix(after, ".tmp-") {
				return sub, counter, inProgress, nonce
			}
		}
	}
	return 0, 0, notPart, ""
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
