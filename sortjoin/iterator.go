package sortjoin

// Iterator yields (key, value) records. Keys are encoded in the memory package's
// order-preserving key encoding; values are opaque serialized records.
//
// Contract: key and val returned by Next are valid until the next call to Next or
// Close; a consumer that keeps them copies them. Next returns ok == false at the end
// of the input or on an error, which Err then returns. Close releases the iterator's
// memory and spill files; it may be called at any time, more than once, and must be
// called on every exit path.
type Iterator interface {
	Next() (key, val []byte, ok bool)
	Err() error
	Close() error
}

// Record is one (key, value) pair held in Go memory, for small inputs and tests.
type Record struct {
	Key, Val []byte
}

// SliceIterator returns an Iterator over recs, in order.
func SliceIterator(recs []Record) Iterator { return &sliceIter{recs: recs} }

type sliceIter struct {
	recs []Record
	i    int
}

func (s *sliceIter) Next() ([]byte, []byte, bool) {
	if s.i >= len(s.recs) {
		return nil, nil, false
	}
	r := s.recs[s.i]
	s.i++
	return r.Key, r.Val, true
}

func (s *sliceIter) Err() error   { return nil }
func (s *sliceIter) Close() error { s.i = len(s.recs); return nil }
