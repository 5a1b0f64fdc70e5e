package evictgen

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Kill is one pod the kubelet killed: in which sync with kills, and the
// grace period it passed.
type Kill struct {
	Step  int
	Grace int64
}

// Driver is the kubelet around one run of a real eviction manager: the
// summary provider (each call is a sync, ten seconds later), the kill
// function and the pod list, in the run's seeded order. It stops the run
// once 40 syncs in a row killed nothing. A version's glue wraps it in that
// release's types.
type Driver struct {
	s       Node
	names   []string
	step    func(time.Duration) // advances the release's fake clock
	mu      sync.Mutex
	order   []int // indices into s.Pods, still running, in the run's order
	kills   map[string]Kill
	steps   int
	sinceK  int // summaries since the last kill
	quiet   int // summaries without a kill
	done    chan struct{}
	stopped bool
}

// Node is what a Driver runs the kubelet on: a Scenario, or a snapshot
// of a real node (the in-process cases).
type Node interface {
	String() string
	// PodNames are the pods' names, as the kubelet's kill function names
	// them, in the node's own order.
	PodNames() []string
	// Summary is the node's summary with the pods named in running still
	// running, at now.
	Summary(running map[string]bool, now time.Time) json.RawMessage
	// Order is the kubelet's pod list order in one run (indices).
	Order(run uint64) []int
}

// PodNames are the scenario's pod names.
func (s *Scenario) PodNames() []string {
	out := make([]string, len(s.Pods))
	for i, p := range s.Pods {
		out[i] = p.Name
	}
	return out
}

// NewDriver prepares run number run of s; step advances the fake clock.
func NewDriver(s *Scenario, run uint64, step func(time.Duration)) *Driver {
	return NewNodeDriver(s, run, step)
}

// NewNodeDriver prepares run number run of n.
func NewNodeDriver(n Node, run uint64, step func(time.Duration)) *Driver {
	return &Driver{s: n, names: n.PodNames(), step: step, order: n.Order(run), kills: map[string]Kill{}, sinceK: 1, done: make(chan struct{})}
}

// Done is closed when the run has settled.
func (d *Driver) Done() <-chan struct{} { return d.done }

// Summary advances the clock by ten seconds and returns the summary of the
// pods still running at now() (the caller's clock, read under the lock).
// After the run settled it blocks forever, so that a manager without a way
// to stop (before 1.35 Start takes no context) parks instead of spinning.
func (d *Driver) Summary(now func() time.Time) json.RawMessage {
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		select {}
	}
	defer d.mu.Unlock()
	d.step(10 * time.Second)
	d.sinceK++
	d.quiet++
	if d.quiet > 40 {
		d.stopped = true
		close(d.done)
	}
	running := map[string]bool{}
	for _, i := range d.order {
		running[d.names[i]] = true
	}
	return d.s.Summary(running, now())
}

// Kill records the kubelet killing pod name with this grace period.
func (d *Driver) Kill(name string, grace int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sinceK > 0 {
		d.steps++
	}
	d.sinceK, d.quiet = 0, 0
	d.kills[name] = Kill{Step: d.steps, Grace: grace}
	d.order = slices.DeleteFunc(d.order, func(i int) bool { return d.names[i] == name })
}

// Running are the indices of the pods still running, in the run's order:
// the kubelet's pod list.
func (d *Driver) Running() []int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.order)
}

// Kills is what the run killed.
func (d *Driver) Kills() map[string]Kill {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]Kill, len(d.kills))
	for k, v := range d.kills {
		out[k] = v
	}
	return out
}

// Wait waits for the run to settle, at most limit. Meanwhile it steps the
// fake clock by a second whenever something waits on it (the manager's
// waitForPodsCleanup polls on the clock's ticker).
func (d *Driver) Wait(limit time.Duration, hasWaiters func() bool) error {
	deadline := time.After(limit)
	for {
		select {
		case <-d.done:
			return nil
		case <-deadline:
			return fmt.Errorf("%s: the eviction manager did not settle", d.s)
		case <-time.After(20 * time.Microsecond):
			if hasWaiters() {
				d.step(time.Second)
			}
		}
	}
}

// EncodeKills renders a run's kills as "name@step/grace" sorted by name,
// space-separated ("" when nothing was killed).
func EncodeKills(kills map[string]Kill) string {
	names := make([]string, 0, len(kills))
	for n := range kills {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s@%d/%d", n, kills[n].Step, kills[n].Grace)
	}
	return strings.Join(parts, " ")
}

// DecodeKills is the inverse of EncodeKills.
func DecodeKills(s string) (map[string]Kill, error) {
	out := map[string]Kill{}
	for _, part := range strings.Fields(s) {
		name, rest, ok1 := strings.Cut(part, "@")
		step, grace, ok2 := strings.Cut(rest, "/")
		st, err1 := strconv.Atoi(step)
		gr, err2 := strconv.ParseInt(grace, 10, 64)
		if !ok1 || !ok2 || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("kill %q: want name@step/grace", part)
		}
		out[name] = Kill{Step: st, Grace: gr}
	}
	return out, nil
}
