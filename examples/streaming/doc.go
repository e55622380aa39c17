// Package streaming holds Flink's streaming examples (flink-examples-streaming)
// as weir DataStream programs: WordCount (running counts per word, over a
// text, files or a watched directory) and the StateMachineExample (a keyed
// state machine per address over generated events, alerting on invalid
// transitions), the IterateExample, and the window examples
// (SessionWindowing, TopSpeedWindowing, WindowWordCount, SideOutputExample,
// SocketWindowWordCount, and RunWindowStats, a windowed aggregation over a
// CSV of events). `weir run <example>` runs them.
//
// # Contracts
//
//   - Each example has a Run function that builds its program on a fresh
//     stream.Env from Options and runs it until its sources end or ctx is
//     done; results are printed in Flink's print format (sink.Print: "N> "
//     before each line at parallelism above 1) to Options.Stdout, or written
//     as part files through stream/sink's FileSink, committed as the job's
//     checkpoints complete (Options.Configure enables them) and when its
//     input ends.
//   - A run ended by ctx returns an error once the job has stopped: its sources
//     have stopped, uncommitted part files are removed and the job's spill
//     directory is gone when it returns.
//   - Errors start with "examples/streaming:"; a missing input names the path.
package streaming
