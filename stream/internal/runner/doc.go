// Package runner runs a stream job as attempts (Flink's JobMaster with its
// scheduler and restart strategies): each attempt resolves the program,
// assigns the state of the snapshot it restores from, starts the flow job
// and, when the job checkpoints, its checkpoint coordinator; a failed
// attempt is restarted from the latest completed checkpoint as the
// restart strategy says. When a checkpointing job's input ended, it stores
// a final snapshot holding what its sinks left to commit (FLIP-147) and
// then commits it; a job restored from a final snapshot only commits.
//
// A spread job (Config.Spread) runs one attempt in each of several
// processes, its parts, and no restarts. Part 0 runs the coordinator, the
// sources' enumerators and their watermark alignments; each other part
// forwards its tasks' registrations, acknowledgements, split requests and
// reported watermarks to it over a link
// (link.go: a control channel up to part 0 and one down from it, on the
// job's flow.Transport; messages in wire.go) and delivers the
// coordinator's messages that come back to its tasks. The parts end as
// one: a part's end (its status, error and final sink states) goes to
// part 0, which ends its own flow job at a failure, stores the final
// snapshot with every part's sink states, and tells every part how the
// job ended (Done), which is what each part's Wait returns.
//
//	Start ─▶ latest snapshot? ─▶ attempt: Resolve ─▶ Assign ─▶ Translate ─▶ flow.Start
//	                                           ▲                  └─▶ coordinator.Run
//	            restart strategy: delay ───────┘ (attempt failed)
package runner
