package rpcabeam

import (
	linked "container/list"
	"context"
	"sync"
)

// DefaultCacheBytes is the default bound of a worker's shard cache
// (Options.CacheBytes): 2 GiB.
const DefaultCacheBytes = 2 << 30

// shardCache keeps the shards a worker process has read, by path, within
// a bound in bytes, evicting the least recently used: the passes of an
// iteration read Φ several times, and a shard file never changes once
// written (a new load writes shards with a new ID). It only saves time: a
// shard not in it is read again.
var shardCache = &lruCache{}

type lruCache struct {
	mu     sync.Mutex
	bytes  int64
	order  linked.List // of *cached, the most recently used first
	byPath map[string]*linked.Element
}

type cached struct {
	path  string
	s     *shard
	bytes int64
}

// shardBytes is the size of s's file, and of its arrays in memory.
func shardBytes(s *shard) int64 {
	return shardHeaderSize + 8*int64(len(s.Ptr)) + 12*int64(len(s.Val))
}

// get returns the shard at path and the bytes read for it (0 when the
// cache had it), keeping it within bound bytes of shards (with the
// least recently used ones dropped to make room; a shard larger than the
// bound is not kept).
func (c *lruCache) get(ctx context.Context, path string, bound int64) (*shard, int64, error) {
	c.mu.Lock()
	if e, ok := c.byPath[path]; ok {
		c.order.MoveToFront(e)
		s := e.Value.(*cached).s
		c.mu.Unlock()
		return s, 0, nil
	}
	c.mu.Unlock()
	s, err := readShard(ctx, path)
	if err != nil {
		return nil, 0, err
	}
	n := shardBytes(s)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byPath == nil {
		c.byPath = map[string]*linked.Element{}
	}
	if _, ok := c.byPath[path]; ok || n > bound {
		c.evict(bound)
		return s, n, nil
	}
	c.byPath[path] = c.order.PushFront(&cached{path, s, n})
	c.bytes += n
	c.evict(bound)
	return s, n, nil
}

// evict drops the least recently used shards until the cache holds at
// most bound bytes.
func (c *lruCache) evict(bound int64) {
	for c.bytes > bound {
		e := c.order.Back()
		v := e.Value.(*cached)
		c.order.Remove(e)
		delete(c.byPath, v.path)
		c.bytes -= v.bytes
	}
}
