package graph

import (
	"reflect"
	"sync"
	"unsafe"
)

// Number is a message type of MinCombiner and SumCombiner.
type Number interface {
	~int | ~int32 | ~int64 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// MinCombiner returns the combiner that keeps the least message, for
// Combine. Any function works, but this one is recognized by its value: for
// int, int32, int64, uint32, uint64, float32 and float64 messages the
// engine combines them in its own loops, without a call per message. It
// returns the same function value for each M.
func MinCombiner[M Number]() func(a, b M) M {
	return sentinel(&mins, func(a, b M) M { return min(a, b) })
}

// SumCombiner returns the combiner that adds the messages, for Combine,
// recognized by its value as MinCombiner's is. Floating-point messages are
// added in the same order as by any other combiner.
func SumCombiner[M Number]() func(a, b M) M {
	return sentinel(&sums, func(a, b M) M { return a + b })
}

var mins, sums sync.Map // reflect.Type -> func(a, b M) M

func sentinel[M any](m *sync.Map, f func(a, b M) M) func(a, b M) M {
	t := reflect.TypeFor[M]()
	if g, ok := m.Load(t); ok {
		return g.(func(a, b M) M)
	}
	g, _ := m.LoadOrStore(t, f)
	return g.(func(a, b M) M)
}

// combineOp is a combiner the engine runs in its own loops.
type combineOp int

const (
	opCall combineOp = iota // the user's function, called per message
	opMin
	opSum
)

// opOf recognizes the function values of MinCombiner and SumCombiner.
func opOf[M any](f func(a, b M) M) combineOp {
	if f == nil {
		return opCall
	}
	t := reflect.TypeFor[M]()
	for _, c := range []struct {
		m  *sync.Map
		op combineOp
	}{{&mins, opMin}, {&sums, opSum}} {
		if g, ok := c.m.Load(t); ok {
			g := g.(func(a, b M) M)
			if *(*unsafe.Pointer)(unsafe.Pointer(&f)) == *(*unsafe.Pointer)(unsafe.Pointer(&g)) {
				return c.op
			}
		}
	}
	return opCall
}

// fastGet returns b's get specialised for its combiner when it is
// MinCombiner's or SumCombiner's for a type of Number without a ~ (nil
// otherwise): the same messages combined in the same order, with no call
// per message.
func fastGet[M any](b *mailbox[M]) func(v uint32, scratch []M) []M {
	op := opOf(b.combine)
	if op == opCall {
		return nil
	}
	var f any
	switch bb := any(b).(type) {
	case *mailbox[int]:
		f = getter(bb, op)
	case *mailbox[int32]:
		f = getter(bb, op)
	case *mailbox[int64]:
		f = getter(bb, op)
	case *mailbox[uint32]:
		f = getter(bb, op)
	case *mailbox[uint64]:
		f = getter(bb, op)
	case *mailbox[float32]:
		f = getter(bb, op)
	case *mailbox[float64]:
		f = getter(bb, op)
	default:
		return nil
	}
	return f.(func(uint32, []M) []M)
}

func getter[T Number](b *mailbox[T], op combineOp) func(v uint32, scratch []T) []T {
	return func(v uint32, scratch []T) []T {
		var acc T
		got := false
		if b.pull {
			in := b.revTargets[b.revOffsets[v]:b.revOffsets[v+1]]
			switch {
			case len(in) == 0:
			case b.full && op == opMin:
				acc, got = fullMin(in, b.bval), true
			case b.full:
				acc, got = fullSum(in, b.bval), true
			case op == opMin:
				acc, got = partMin(in, b.bhas, b.bval)
			default:
				acc, got = partSum(in, b.bhas, b.bval)
			}
		}
		word, bit := v>>6, uint64(1)<<(v&63)
		for w, has := range b.has {
			if has[word]&bit == 0 {
				continue
			}
			m := b.slots[w][v]
			switch {
			case !got:
				acc, got = m, true
			case op == opMin:
				acc = min(acc, m)
			default:
				acc += m
			}
		}
		if !got {
			return nil
		}
		scratch[0] = acc
		return scratch[:1]
	}
}

// fullMin returns the least of bval over in (not empty).
func fullMin[T Number](in []uint32, bval []T) T {
	acc := bval[in[0]]
	for _, u := range in[1:] {
		acc = min(acc, bval[u])
	}
	return acc
}

// fullSum returns the sum of bval over in (not empty), in its order.
func fullSum[T Number](in []uint32, bval []T) T {
	acc := bval[in[0]]
	for _, u := range in[1:] {
		acc += bval[u]
	}
	return acc
}

// partMin returns the least of bval over the members of in that bhas.
func partMin[T Number](in []uint32, bhas []bool, bval []T) (T, bool) {
	var acc T
	got := false
	for _, u := range in {
		if !bhas[u] {
			continue
		}
		if got {
			acc = min(acc, bval[u])
		} else {
			acc, got = bval[u], true
		}
	}
	return acc, got
}

// partSum returns the sum of bval over the members of in that bhas, in its
// order.
func partSum[T Number](in []uint32, bhas []bool, bval []T) (T, bool) {
	var acc T
	got := false
	for _, u := range in {
		if !bhas[u] {
			continue
		}
		if got {
			acc += bval[u]
		} else {
			acc, got = bval[u], true
		}
	}
	return acc, got
}
