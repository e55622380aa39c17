package stream

import (
	"time"

	"github.com/weirdata/weir/stream/internal/runner"
)

// AttemptFailure is a failed attempt of a job, as Options.OnAttemptFailure
// receives it: the attempt's number (1 for the first), why it failed, and
// what comes next. Restart says whether the job restarts: after Delay,
// from the checkpoint Restore names ("" when it starts without state).
// Without a restart, Reason says why not: the failure is unrecoverable, or
// the restart strategy allows no more restarts.
type AttemptFailure struct {
	Attempt int
	Err     error
	Restart bool
	Delay   time.Duration
	Restore string
	Reason  string
}

// RestoreInfo is a job's restore, as Options.OnRestore receives it: the
// snapshot's id, where it is, and whether the job had finished in it (then
// the job only commits what its sinks left and ends).
type RestoreInfo struct {
	ID       int64
	Where    string
	Finished bool
}

// UnrecoverableError marks a failure that no restart can cure, as Flink's
// SuppressRestartsException: a restore that cannot map the checkpoint, a
// record that fails the same way each time it is read. The job fails at
// once, whatever its restart strategy.
type UnrecoverableError struct{ Err error }

func (e *UnrecoverableError) Error() string { return e.Err.Error() }

// Unwrap returns the failure.
func (e *UnrecoverableError) Unwrap() error { return e.Err }

// Unrecoverable reports true: the error is not worth a restart.
func (e *UnrecoverableError) Unrecoverable() bool { return true }

// Unrecoverable marks err as a failure no restart can cure; nil stays nil.
func Unrecoverable(err error) error {
	if err == nil {
		return nil
	}
	return &UnrecoverableError{Err: err}
}

// IsUnrecoverable reports whether err, or an error it wraps, has a method
// Unrecoverable() bool that returns true. Packages below stream mark their
// errors so without importing it (a source's parse error, a sink's
// refused restore, a state backend that cannot read a snapshot).
func IsUnrecoverable(err error) bool { return runner.IsUnrecoverable(err) }
