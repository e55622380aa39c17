// Package ring is a FIFO of ints with a fixed capacity: the queues of
// channel indexes that the runtime's inboxes and gates and the data
// plane's inboxes keep. Its methods inline, allocate nothing and are not
// safe for concurrent use.
package ring

// FIFO is a queue of at most its capacity ints. The zero FIFO has no
// room: make one with New.
type FIFO struct {
	buf     []int
	head, n int
}

// New returns an empty FIFO of capacity max(capacity, 1).
func New(capacity int) FIFO { return FIFO{buf: make([]int, max(capacity, 1))} }

// Wrap returns i modulo n for 0 <= i < 2n: the index of a ring buffer's
// slot i places after its head.
func Wrap(i, n int) int {
	if i >= n {
		return i - n
	}
	return i
}

// Len returns the number of ints queued.
func (r *FIFO) Len() int { return r.n }

// Push appends v; the FIFO must have room.
func (r *FIFO) Push(v int) {
	r.buf[Wrap(r.head+r.n, len(r.buf))] = v
	r.n++
}

// Pop removes and returns the first int; the FIFO must not be empty.
func (r *FIFO) Pop() int {
	v := r.buf[r.head]
	r.head = Wrap(r.head+1, len(r.buf))
	r.n--
	return v
}

// Remove drops every v, keeping the order of the rest.
func (r *FIFO) Remove(v int) {
	k := 0
	for i := 0; i < r.n; i++ {
		if x := r.buf[Wrap(r.head+i, len(r.buf))]; x != v {
			r.buf[Wrap(r.head+k, len(r.buf))] = x
			k++
		}
	}
	r.n = k
}
