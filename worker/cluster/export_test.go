package cluster

import "github.com/nats-io/nats.go/jetstream"

// DoneValue is doneValue, for tests that write done records themselves.
var DoneValue = doneValue

// ShardToken is shardToken, for tests that publish shard messages
// themselves.
var ShardToken = shardToken

// WrapStores replaces the queue's job bucket and result store with what
// wrap returns for them (a nil function keeps the store), so that tests
// can make their writes fail or record their calls.
func WrapStores(q *Queue, kv func(jetstream.KeyValue) jetstream.KeyValue, obs func(jetstream.ObjectStore) jetstream.ObjectStore) {
	if kv != nil {
		q.kv = kv(q.kv)
		q.wq.SetKV(q.kv)
	}
	if obs != nil {
		q.obs = obs(q.obs)
	}
}
