package coordinator

import (
	"encoding/binary"
	"errors"

	"github.com/weirdata/weir/stream/source"
)

// EncodeEnumeratorState writes a source enumerator's state: the pending
// splits (each its MarshalBinary form) and the files discovered, each list
// counted and each item length-prefixed.
func EncodeEnumeratorState(st source.EnumeratorState) ([]byte, error) {
	b := binary.AppendUvarint(nil, uint64(len(st.Pending)))
	for _, s := range st.Pending {
		enc, err := s.MarshalBinary()
		if err != nil {
			return nil, err
		}
		b = binary.AppendUvarint(b, uint64(len(enc)))
		b = append(b, enc...)
	}
	b = binary.AppendUvarint(b, uint64(len(st.Processed)))
	for _, p := range st.Processed {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	return b, nil
}

var errEnumeratorState = errors.New("stream: corrupt source enumerator state")

func DecodeEnumeratorState(b []byte) (*source.EnumeratorState, error) {
	item := func() ([]byte, error) {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return nil, errEnumeratorState
		}
		v := b[k : k+int(n)]
		b = b[k+int(n):]
		return v, nil
	}
	count := func() (int, error) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)) {
			return 0, errEnumeratorState
		}
		b = b[k:]
		return int(n), nil
	}
	st := &source.EnumeratorState{}
	n, err := count()
	if err != nil {
		return nil, err
	}
	for range n {
		enc, err := item()
		if err != nil {
			return nil, err
		}
		var s source.Split
		if err := s.UnmarshalBinary(enc); err != nil {
			return nil, err
		}
		st.Pending = append(st.Pending, s)
	}
	if n, err = count(); err != nil {
		return nil, err
	}
	for range n {
		p, err := item()
		if err != nil {
			return nil, err
		}
		st.Processed = append(st.Processed, string(p))
	}
	if len(b) != 0 {
		return nil, errEnumeratorState
	}
	return st, nil
}
