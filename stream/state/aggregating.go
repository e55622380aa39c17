package state

// AggregateFunction is Flink's AggregateFunction: values IN are added to an
// accumulator ACC, accumulators merge, and the result OUT is read from one.
type AggregateFunction[IN, ACC, OUT any] interface {
	CreateAccumulator() ACC
	Add(v IN, acc ACC) ACC
	GetResult(acc ACC) OUT
	Merge(a, b ACC) ACC
}

// AggregatingState is Flink's AggregatingState: values added to a key's
// accumulator, read as a result.
type AggregatingState[IN, OUT any] interface {
	// Get returns the current key's result, false when nothing was added.
	Get() (OUT, bool)
	// Add adds v to the current key's accumulator.
	Add(v IN)
	// Clear removes the current key's accumulator.
	Clear()
}

// AggregatingDescriptor names an AggregatingState and its function.
type AggregatingDescriptor[IN, ACC, OUT any] struct {
	Name string
	Func AggregateFunction[IN, ACC, OUT]
	TTL  TTLConfig
}

// Aggregating is an AggregatingState in namespaces N, holding accumulators ACC.
type Aggregating[K, N comparable, IN, ACC, OUT any] struct {
	cells[K, N, ACC]
	fn AggregateFunction[IN, ACC, OUT]
}

// NewAggregating returns the backend's aggregating state of that name,
// registering it on first use.
func NewAggregating[K, N comparable, IN, ACC, OUT any](b *Backend[K], d AggregatingDescriptor[IN, ACC, OUT]) (*Aggregating[K, N, IN, ACC, OUT], error) {
	if s, ok, err := lookup[*Aggregating[K, N, IN, ACC, OUT]](b, d.Name); ok || err != nil {
		return s, err
	}
	if d.Func == nil {
		return nil, errNoFunc(b.name, KindAggregating, d.Name)
	}
	c, err := newCells[K, N, ACC](b, d.Name, KindAggregating, d.TTL)
	if err != nil {
		return nil, err
	}
	s := &Aggregating[K, N, IN, ACC, OUT]{c, d.Func}
	return s, b.register(s, false)
}

// GetAggregatingState returns the aggregating state of that name in the Void
// namespace.
func GetAggregatingState[K comparable, IN, ACC, OUT any](b *Backend[K], d AggregatingDescriptor[IN, ACC, OUT]) (AggregatingState[IN, OUT], error) {
	s, err := NewAggregating[K, Void, IN, ACC, OUT](b, d)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Aggregating[K, N, IN, ACC, OUT]) kind() Kind { return KindAggregating }

// KeysIn returns the keys that have an entry in namespace ns (expired or not),
// as Flink's getKeys; the caller may set each as the current key and change
// the state.
func (s *Aggregating[K, N, IN, ACC, OUT]) KeysIn(ns N) []K { return s.keysIn(ns) }

// Get returns the result of the current key's accumulator in the current
// namespace.
func (s *Aggregating[K, N, IN, ACC, OUT]) Get() (OUT, bool) {
	acc, ok := s.get(s.ns)
	if !ok {
		var zero OUT
		return zero, false
	}
	return s.fn.GetResult(acc), true
}

// Add adds v to the current key's accumulator in the current namespace.
func (s *Aggregating[K, N, IN, ACC, OUT]) Add(v IN) { s.AddPresent(v) }

// AddPresent is Add, reporting whether the current key had an accumulator
// in the current namespace before.
func (s *Aggregating[K, N, IN, ACC, OUT]) AddPresent(v IN) bool {
	if c := s.inPlace(s.ns); c != nil {
		c.v = s.fn.Add(v, c.v)
		return true
	}
	c, ok := s.live(s.ns)
	if !ok {
		c.v = s.fn.CreateAccumulator()
	}
	s.put(s.ns, s.fn.Add(v, c.v))
	return ok
}

// Clear removes the current key's accumulator in the current namespace.
func (s *Aggregating[K, N, IN, ACC, OUT]) Clear() { s.remove(s.ns) }

// MergeNamespaces merges the current key's accumulators in the sources into
// the one in target and removes the sources.
func (s *Aggregating[K, N, IN, ACC, OUT]) MergeNamespaces(target N, sources []N) {
	s.mergeInto(target, sources, s.fn.Merge)
}
