package state

// ReducingState is Flink's ReducingState: the values added to a key, reduced
// to one by the descriptor's function.
type ReducingState[V any] interface {
	// Get returns the current key's reduced value, false when it has none.
	Get() (V, bool)
	// Add reduces v into the current key's value.
	Add(v V)
	// Clear removes the current key's value.
	Clear()
}

// ReducingDescriptor names a ReducingState and its reduce function, which
// returns the reduction of the value held and a new one.
type ReducingDescriptor[V any] struct {
	Name   string
	Reduce func(acc, v V) V
	TTL    TTLConfig
}

// Reducing is a ReducingState in namespaces N.
type Reducing[K, N comparable, V any] struct {
	cells[K, N, V]
	reduce func(acc, v V) V
}

// NewReducing returns the backend's reducing state of that name, registering
// it on first use.
func NewReducing[K, N comparable, V any](b *Backend[K], d ReducingDescriptor[V]) (*Reducing[K, N, V], error) {
	if s, ok, err := lookup[*Reducing[K, N, V]](b, d.Name); ok || err != nil {
		return s, err
	}
	if d.Reduce == nil {
		return nil, errNoFunc(b.name, KindReducing, d.Name)
	}
	c, err := newCells[K, N, V](b, d.Name, KindReducing, d.TTL)
	if err != nil {
		return nil, err
	}
	s := &Reducing[K, N, V]{c, d.Reduce}
	return s, b.register(s, false)
}

// GetReducingState returns the reducing state of that name in the Void namespace.
func GetReducingState[K comparable, V any](b *Backend[K], d ReducingDescriptor[V]) (ReducingState[V], error) {
	s, err := NewReducing[K, Void, V](b, d)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Reducing[K, N, V]) kind() Kind { return KindReducing }

// KeysIn returns the keys that have an entry in namespace ns (expired or not),
// as Flink's getKeys; the caller may set each as the current key and change
// the state.
func (s *Reducing[K, N, V]) KeysIn(ns N) []K { return s.keysIn(ns) }

// Get returns the current key's reduced value in the current namespace.
func (s *Reducing[K, N, V]) Get() (V, bool) { return s.get(s.ns) }

// Add reduces v into the current key's value in the current namespace.
func (s *Reducing[K, N, V]) Add(v V) { s.AddPresent(v) }

// AddPresent is Add, reporting whether the current key had a value in the
// current namespace before.
func (s *Reducing[K, N, V]) AddPresent(v V) bool {
	if c := s.inPlace(s.ns); c != nil {
		c.v = s.reduce(c.v, v)
		return true
	}
	c, ok := s.live(s.ns)
	if ok {
		v = s.reduce(c.v, v)
	}
	s.put(s.ns, v)
	return ok
}

// Clear removes the current key's value in the current namespace.
func (s *Reducing[K, N, V]) Clear() { s.remove(s.ns) }

// MergeNamespaces reduces the current key's values in the sources into the
// one in target and removes the sources (Flink's mergeNamespaces: session
// windows merging). Expired values take no part.
func (s *Reducing[K, N, V]) MergeNamespaces(target N, sources []N) {
	s.mergeInto(target, sources, s.reduce)
}
