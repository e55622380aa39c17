package window

// AssignerContext is what an assigner sees of the operator: the
// processing time, for processing-time windows.
type AssignerContext interface {
	CurrentProcessingTime() int64
}

// Assigner is Flink's WindowAssigner: it puts an element into zero or more
// windows. elem is a pointer to the element (*T of the stream's type T),
// for assigners that read it; ts is its timestamp. AssignWindows appends
// to dst and returns it; an error (an element without a timestamp in an
// event-time assigner) fails the job.
type Assigner[W Window] interface {
	AssignWindows(elem any, ts int64, ctx AssignerContext, dst []W) ([]W, error)
	// DefaultTrigger is the trigger used when the program sets none.
	DefaultTrigger() Trigger[W]
	// IsEventTime says whether windows end by the watermark: lateness and
	// cleanup are in event time, else in processing time.
	IsEventTime() bool
}

// EachAssigner is an assigner that gives every element exactly one window,
// from its timestamp alone (tumbling windows). AssignEach sets dst[i] to the
// window of the element of timestamp ts[i], for a run of elements at once,
// as AssignWindows would one at a time; it returns AssignWindows's error for
// the first element that has one (dst is then undefined). The window
// operator assigns a run of records with one call.
type EachAssigner[W Window] interface {
	AssignEach(ts []int64, ctx AssignerContext, dst []W) error
}

// MergingAssigner is Flink's MergingWindowAssigner: an assigner whose
// windows merge (session windows). MergeWindows calls merge once per group
// of windows that become one, with the group and the window they become.
type MergingAssigner[W Window] interface {
	Assigner[W]
	MergeWindows(windows []W, merge func(toMerge []W, result W)) error
}
