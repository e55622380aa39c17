package stream

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// UID sets the stable id of the operator that makes the stream (Flink's
// uid): a restore maps a snapshot's state to operators by it, so an
// operator keeps its state across changes of the program. Without one the
// id is derived from the operator's place in the graph. Two operators with
// the same uid are an error.
func (ds DataStream[T]) UID(uid string) DataStream[T] {
	for _, n := range ds.n.env.nodes {
		if n != ds.n && n.uid == uid {
			ds.n.env.fail(caller(1), fmt.Errorf("Hash collision on user-specified ID %q. Most likely cause is a non-unique ID. Please check that all IDs specified via `uid(String)` are unique.", uid))
			return ds
		}
	}
	ds.n.uid = uid
	return ds
}

// operatorIDs returns every node's stable id, as Flink's StreamGraphHasherV2:
// a hash of the user's uid when set, else of the node's position in the
// program and the ids of its inputs (with their ports and input order), so
// renaming an operator keeps its id and changing what feeds it does not.
func (e *Env) operatorIDs() map[*node]string {
	ids := make(map[*node]string, len(e.nodes))
	for _, n := range e.nodes { // inputs come before the nodes they feed
		h := sha256.New()
		if n.uid != "" {
			h.Write([]byte("uid\x00" + n.uid))
		} else {
			var b [8]byte
			binary.BigEndian.PutUint64(b[:], uint64(n.id))
			h.Write([]byte("node\x00"))
			h.Write(b[:])
			for _, in := range n.inputs {
				h.Write([]byte("\x00" + ids[in.from] + "\x00" + in.port))
			}
		}
		ids[n] = hex.EncodeToString(h.Sum(nil)[:16])
	}
	return ids
}

// fingerprint identifies the job in its checkpoints: a hash of
// Options.Fingerprint and the operators' ids, in program order.
func (e *Env) fingerprint() string {
	h := sha256.New()
	h.Write([]byte(e.opts.Fingerprint))
	ids := e.operatorIDs()
	for _, n := range e.nodes {
		h.Write([]byte("\x00" + ids[n]))
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}
