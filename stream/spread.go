package stream

import (
	"errors"
	"fmt"

	"github.com/weirdata/weir/flow"
	"github.com/weirdata/weir/stream/internal/runner"
)

// Spread runs a job in several processes at once (Flink's subtasks in the
// slots of several TaskManagers): one Env per process, each built by the
// same program with the same Options but for Spread.Part, each running its
// part of the job.
//
// Placement: the processes' slots are numbered process by process, and
// subtask i of every operator runs in the process that holds slot i modulo
// the total (Flink's slot sharing). The channels between processes go over
// the Transport, records as their type's codec writes them (an edge that
// crosses processes with a record type without a codec fails the job,
// naming the edge); watermarks, barriers and the end of input go in band,
// as in one process.
//
// Part 0 runs the checkpoint coordinator and the sources' split
// enumerators. The other parts' tasks register with it, acknowledge
// checkpoints and ask for splits over two control channels of the same
// Transport; what comes before part 0 started waits for it. Every part restores from the same snapshot: the checkpoint
// Storage must be one all the processes see (a shared directory, S3).
// Only part 0 takes Job.TriggerCheckpoint, TriggerSavepoint and
// StopWithSavepoint, and only its Job.Checkpoints has the history; a stop
// with a savepoint stops every part.
//
// The job ends as one: a part that fails or is canceled ends the others,
// and every part's Wait returns how the job ended. A spread job does not
// restart in process (Options.Restart must be nil or NoRestart): whoever
// runs the processes starts them again, and they restore from the latest
// checkpoint. At the end of a bounded input part 0 stores the final
// checkpoint with every part's last sink committables and commits them
// all: the files a sink writes must be on storage part 0 sees too.
//
// Unaligned checkpoints work as in one process, but for one thing: a
// barrier overtakes the records queued in its consumer's process and
// those pending in its producer's, not the frames on their way between the
// two (at most a channel's credit), which it follows.
//
// An iteration's head and tail subtask i share a process (their
// parallelisms are equal), so its feedback stays in the process, as in
// one; the loop body's edges may cross processes.
//
// Watermark alignment runs in part 0 too: the other parts' source
// subtasks report their watermarks to it and hear its bounds over the
// control channels. The batch execution mode spreads as well; without
// checkpointing each part commits its sinks' files at its end.
type Spread struct {
	// Part is this process's index in Slots.
	Part int
	// Slots are the slots of each process (at least one each).
	Slots []int
	// Job is the job's id, the same in every process: 32 hex digits, as
	// Flink's JobID. Job.ID returns it.
	Job string
	// Transport returns the transport of the job's channels between
	// processes, given the process part(v, i) that runs subtask i of flow
	// vertex v.
	Transport func(part func(v, i int) int) (Transport, error)
}

// Transport carries a spread job's channels between processes
// (cluster/dataplane's over a TaskManager's shuffle).
type Transport = flow.Transport

// check validates s and the options it runs with.
func (s *Spread) check(o *Options) error {
	if err := flow.CheckSlots(s.Part, s.Slots); err != nil {
		return fmt.Errorf("stream: Spread: %w", err)
	}
	if s.Transport == nil {
		return errors.New("stream: Spread without a Transport")
	}
	if s.Job == "" {
		return errors.New("stream: Spread without the job's id")
	}
	if o.Restart != nil && o.Restart.s.Kind != runner.RestartNone {
		return errors.New("stream: a spread job does not restart in process: its Restart must be NoRestart; whoever runs its processes starts them again")
	}
	return nil
}

// runner returns s as the runner takes it.
func (s *Spread) runner() *runner.Spread {
	return &runner.Spread{Part: s.Part, Slots: s.Slots, Transport: s.Transport}
}
