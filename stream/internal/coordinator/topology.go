package coordinator

// Topology is what a coordinator knows of its job attempt.
type Topology struct {
	Job     string
	Attempt int
	// Tasks are the job's tasks.
	Tasks []Task
	// Operators are the job's operators in program order (inputs before
	// the operators they feed).
	Operators []Operator
	// Edges are the job's network edges, for channel state.
	Edges []Edge
}

// Task is one task (vertex) of a topology.
type Task struct {
	// Vertex is the stable id of its head operator.
	Vertex      string
	Name        string
	Parallelism int
	// Source: triggered by the coordinator, with its operators' valves.
	Source bool
	// Operators are the ids of its chain's operators, head first.
	Operators []string
}

// Operator is one operator of a topology.
type Operator struct {
	ID   string
	Name string
	UID  string // the user's uid, when set

	Kind        string // what it is: "Map", "KeyedProcess", "Window", ...
	Parallelism int
	// MaxParallelism is its number of key groups; Keyed operators only.
	MaxParallelism int
	Keyed          bool
	// MaxParallelismSet: the program set the max parallelism explicitly,
	// so a restore cannot change it.
	MaxParallelismSet bool
	// Vertex is the stable id of the task it runs in.
	Vertex string
	// Valve is the valve of a source's enumerator, nil for other operators.
	Valve *Valve
}

// Edge is a network edge of a topology.
type Edge struct {
	// Key names it in channel state: the consumer's id and input index.
	Key string
	// From and To are the stable ids of the producer's and consumer's
	// tasks; FromName and ToName their operators' names.
	From, To         string
	FromName, ToName string
	Producers        int
	Consumers        int
	Broadcast        bool
}

// task returns the task of vertex v.
func (t *Topology) task(v string) *Task {
	for i := range t.Tasks {
		if t.Tasks[i].Vertex == v {
			return &t.Tasks[i]
		}
	}
	return nil
}

// operator returns the operator of id, or nil.
func (t *Topology) operator(id string) *Operator {
	for i := range t.Operators {
		if t.Operators[i].ID == id {
			return &t.Operators[i]
		}
	}
	return nil
}
