// Package runner runs a stream job as attempts (Flink's JobMaster with its
// scheduler and restart strategies): each attempt resolves the program,
// assigns the state of the snapshot it restores from, starts the flow job
// and, when the job checkpoints, its checkpoint coordinator; a failed
// attempt is restarted from the latest completed checkpoint as the
// restart strategy says. When a checkpointing job's input ended, it stores
// a final snapshot holding what its sinks left to commit (FLIP-147) and
// then commits it; a job restored from a final snapshot only commits.
//
//	Start ─▶ latest snapshot? ─▶ attempt: Resolve ─▶ Assign ─▶ Translate ─▶ flow.Start
//	                                           ▲                  └─▶ coordinator.Run
//	            restart strategy: delay ───────┘ (attempt failed)
package runner
