package cluster

// DoneValue is doneValue, for tests that write done records themselves.
var DoneValue = doneValue

// ShardToken is shardToken, for tests that publish shard messages
// themselves.
var ShardToken = shardToken
