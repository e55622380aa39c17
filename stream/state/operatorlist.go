package state

import (
	"fmt"
	"unsafe"
)

// OperatorList is an operator's list state (Flink's getListState and
// getUnionListState): one list per operator instance, its elements the unit
// a restore redistributes.
type OperatorList[V any] struct {
	s       *OperatorStore
	name    string
	what    string
	dist    Distribution
	items   []V
	sz      int64
	vs      sizer[V]
	scratch []byte
}

// GetOperatorListState returns the operator's split-distribute list state of
// that name (Flink's OperatorStateStore.getListState), registering it on
// first use: on a restore at another parallelism its elements, gathered from
// every old subtask in order, are split evenly over the new subtasks.
func GetOperatorListState[V any](s *OperatorStore, d ListDescriptor[V]) (ListState[V], error) {
	return newOperatorList(s, d, SplitDistribute)
}

// GetUnionListState returns the operator's union list state of that name
// (Flink's getUnionListState): on a restore every subtask gets the elements
// of every old subtask, in subtask order.
func GetUnionListState[V any](s *OperatorStore, d ListDescriptor[V]) (ListState[V], error) {
	return newOperatorList(s, d, Union)
}

func newOperatorList[V any](s *OperatorStore, d ListDescriptor[V], dist Distribution) (*OperatorList[V], error) {
	if l, ok, err := lookupOp[*OperatorList[V]](s, d.Name, dist); ok || err != nil {
		return l, err
	}
	if d.TTL.TTL != 0 {
		return nil, fmt.Errorf("state: %s: %s %q: TTL applies to keyed state only", s.name, dist, d.Name)
	}
	l := &OperatorList[V]{s: s, name: d.Name, what: fmt.Sprintf("%s %q", dist, d.Name), dist: dist}
	var err error
	if l.vs, err = newSizer[V]("element of " + l.what); err != nil {
		return nil, err
	}
	return l, s.register(l)
}

func (l *OperatorList[V]) elemBytes(v *V) int64 {
	return int64(unsafe.Sizeof(*v)) + l.vs.extra(v, &l.scratch)
}

// Get returns a copy of the list, nil when it is empty.
func (l *OperatorList[V]) Get() []V {
	if len(l.items) == 0 {
		return nil
	}
	return append([]V(nil), l.items...)
}

// Add appends v.
func (l *OperatorList[V]) Add(v V) { l.AddAll([]V{v}) }

// AddAll appends vs.
func (l *OperatorList[V]) AddAll(vs []V) {
	n := int64(0)
	for i := range vs {
		n += l.elemBytes(&vs[i])
	}
	l.items = append(l.items, vs...)
	l.sz += n
	l.s.grow(n, l.what)
}

// Update replaces the list by vs.
func (l *OperatorList[V]) Update(vs []V) {
	l.Clear()
	l.AddAll(vs)
}

// Clear empties the list.
func (l *OperatorList[V]) Clear() {
	clear(l.items)
	l.items = l.items[:0]
	l.s.shrink(l.sz)
	l.sz = 0
}

func (l *OperatorList[V]) stateName() string  { return l.name }
func (l *OperatorList[V]) mode() Distribution { return l.dist }

func (l *OperatorList[V]) drop() {
	l.items, l.sz = nil, 0
}

func (l *OperatorList[V]) write(dst [][]byte, scratch []byte) ([][]byte, []byte) {
	for i := range l.items {
		start := len(scratch)
		scratch = l.vs.codec.Append(scratch, &l.items[i])
		dst = append(dst, scratch[start:len(scratch):len(scratch)])
	}
	return dst, scratch
}

func (l *OperatorList[V]) read(entries [][]byte) error {
	vs := make([]V, len(entries))
	for i, e := range entries {
		d := newDec(e)
		decodeValue(&d, &l.vs, &vs[i])
		err := d.Err
		if n := len(e) - len(d.B); err == nil && n != len(e) {
			err = fmt.Errorf("%d bytes after the element", len(e)-n)
		}
		if err != nil {
			return fmt.Errorf("%w: element %d: %v", ErrCorruptSnapshot, i, err)
		}
	}
	l.AddAll(vs)
	return nil
}
