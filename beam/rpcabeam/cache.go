package rpcabeam

import (
	linked "container/list"
	"context"
	"errors"
	"sync"

	"gonum.org/v1/gonum/mat"
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

// ReleaseShards drops every shard this process keeps between passes
// (--cache-mb), as a launcher that runs the workers in its own process
// (in-process Prism) does when the passes are over and it needs the
// memory for something else. A later pass reads its shards again.
func ReleaseShards() {
	shardCache.mu.Lock()
	defer shardCache.mu.Unlock()
	shardCache.evict(0)
}

// broadcastCache keeps the broadcast files that every shard of a side
// reads whole (the other factor, an operand, the thresholds of T) for the
// pipeline in progress, so that a worker process reads and decodes each
// once a pipeline rather than once a shard, and its shards share one
// copy. The files do not change while a pipeline runs (the driver writes
// them between pipelines), and the cache forgets them all as soon as a
// shard of another pipeline asks: it holds at most one pipeline's
// broadcasts, which its shards would hold anyway.
var broadcastCache = &broadcasts{}

type broadcasts struct {
	mu       sync.Mutex
	pipeline string
	files    map[string]*broadcast
}

type broadcast struct {
	ready chan struct{} // closed when m and err are set
	m     *mat.Dense
	err   error
}

// get returns the matrix of the file at path for the pipeline named
// pipeline (unique to the run and the pipeline: Store.pass), calling read
// when no shard of that pipeline in this process has read it yet, and
// reports whether this call read it. A failed read is not kept: a retried
// shard reads again, and so does a shard that waited for a read whose
// own context ended.
func (c *broadcasts) get(ctx context.Context, pipeline, path string, read func() (*mat.Dense, error)) (*mat.Dense, bool, error) {
	for {
		c.mu.Lock()
		if c.pipeline != pipeline {
			c.pipeline, c.files = pipeline, map[string]*broadcast{}
		}
		b, ok := c.files[path]
		if !ok {
			b = &broadcast{ready: make(chan struct{})}
			c.files[path] = b
		}
		c.mu.Unlock()
		if !ok {
			return c.fill(path, b, read)
		}
		select {
		case <-b.ready:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
		if b.err != nil && ctx.Err() == nil && (errors.Is(b.err, context.Canceled) || errors.Is(b.err, context.DeadlineExceeded)) {
			continue // another shard's context ended its read, not ours
		}
		return b.m, false, b.err
	}
}

// fill reads the file at path into b, the entry get made for it.
func (c *broadcasts) fill(path string, b *broadcast, read func() (*mat.Dense, error)) (*mat.Dense, bool, error) {
	b.m, b.err = read()
	if b.err != nil {
		c.mu.Lock()
		if c.files[path] == b {
			delete(c.files, path)
		}
		c.mu.Unlock()
	}
	close(b.ready)
	return b.m, true, b.err
}
