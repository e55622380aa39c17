package stream

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/weirdata/weir/stream/internal/graph"
)

// UID sets the stable id of the operator that makes the stream (Flink's
// uid): a restore maps a snapshot's state to operators by it, so an
// operator keeps its state across changes of the program. Without one the
// id is derived from the operator's kind and the ids of its inputs: an
// operator inserted upstream changes it. Two operators with the same uid
// are an error.
func (ds DataStream[T]) UID(uid string) DataStream[T] {
	setUID(ds.env, ds.n, uid, caller(1))
	return ds
}

func setUID(env *Env, n *graph.Node, uid, where string) {
	if uid == "" {
		env.fail(where, fmt.Errorf("%s: an empty uid", n.Name))
		return
	}
	for _, o := range env.p.Nodes {
		if o != n && o.UID == uid {
			env.fail(where, fmt.Errorf("%s: the uid %q is taken by %s already: uids must be unique", n.Name, uid, o.Name))
			return
		}
	}
	n.UID = uid
}

// fingerprint identifies the job in its checkpoints: a hash of
// Options.Fingerprint and the operators' ids, in program order.
func (e *Env) fingerprint() string {
	h := sha256.New()
	h.Write([]byte(e.opts.Fingerprint))
	ids := graph.OperatorIDs(e.p)
	for _, n := range e.p.Nodes {
		h.Write([]byte("\x00" + ids[n]))
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}
