package state

import "sort"

// timerCounter is a timer service's count of its timers.
type timerCounter interface {
	NumEventTimeTimers() int
	NumProcessingTimeTimers() int
}

// NumKeyedStateEntries returns the entries of the backend's registered
// states: one per key and namespace that holds a value, a list or a map
// (Flink's numKeyedStateEntries of the heap backend), expired entries
// left out. It reads every entry; tests use it.
func (b *Backend[K]) NumKeyedStateEntries() int {
	names := make([]string, 0, len(b.states))
	for name := range b.states {
		names = append(names, name)
	}
	sort.Strings(names)
	n, now := 0, b.now()
	var buf []byte
	for _, name := range names {
		s := b.states[name]
		for idx := range b.groups.Len() {
			var c int
			buf, c = s.write(buf[:0], idx, now)
			n += c
		}
	}
	return n
}

// NumEventTimeTimers returns the event-time timers of every timer service.
func (b *Backend[K]) NumEventTimeTimers() int {
	n := 0
	for _, t := range b.timers {
		n += t.(timerCounter).NumEventTimeTimers()
	}
	return n
}

// NumProcessingTimeTimers returns the processing-time timers of every timer
// service.
func (b *Backend[K]) NumProcessingTimeTimers() int {
	n := 0
	for _, t := range b.timers {
		n += t.(timerCounter).NumProcessingTimeTimers()
	}
	return n
}
