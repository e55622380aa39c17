// Package graph is a DataStream program as a graph of nodes (Flink's
// StreamGraph) and its translation into a job: parallelisms, key groups
// and partitionings resolved, operators chained into tasks, stable
// operator ids, and flow vertices whose bodies run package task's
// runtime (Flink's StreamingJobGraphGenerator).
//
// # Model
//
//	Program: Nodes (sources, operators, sinks) ── Edges (port → input, partitioning)
//	   │ Resolve(Options)            once per attempt; the nodes stay builders
//	   ▼
//	Resolved: parallelism and max parallelism per node, partitionings,
//	          chains (tasks), stable ids, the coordinator's Topology
//	   │ Build(assignment, coordinator)
//	   ▼
//	flow.Graph: a vertex per task; each subtask builds its chain with the
//	            nodes' Build functions into a task.Runtime and runs it
//
// A node's Build makes one subtask's operator: package stream's API
// functions set it, with the operators of package op. Ports are typed by
// the closures NewPort makes, so the graph itself is not generic.
//
// # Stable ids
//
// An operator's id is a hash of its uid when the program sets one, else
// of its kind and its lineage: the ids of its inputs (with their ports),
// and its place among the nodes of the same kind on the same inputs. An
// operator inserted on one path changes the ids downstream of it on that
// path only, and two operators of different kinds never share an id, so a
// restore gives each operator its own state or fails naming it.
package graph
