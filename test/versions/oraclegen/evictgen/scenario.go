// Package evictgen draws the seeded random nodes on which the kubelet's real
// eviction manager is compared with pkg/eviction: pods, the node summary
// (a function of which pods still run) and the kubelet's thresholds, all as
// plain JSON, so that the 1.37 in-process test and every version module in
// test/versions decode the same nodes into their own k8s.io/api and stats
// types. It imports nothing outside the standard library.
package evictgen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"
)

// Mi is a mebibyte.
const Mi = int64(1) << 20

// NodeName is the node every scenario runs on.
const NodeName = "evict-node"

// Start is the fake clock's start: the summary's time before the first sync.
var Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Pod is one pod of a random node and its usage.
type Pod struct {
	Name               string
	Prio               int32
	Critical           string // "", "static", "priority"
	MemReq, MemLim     int64
	StorReq, StorLim   int64
	WS, Procs          int64
	Root, Logs, Vol    int64 // bytes
	RootI, LogsI, VolI int64 // inodes
	SizeLimit          int64 // emptyDir sizeLimit (0: none)
	TGPS               *int64
	// SidecarMemReq, SidecarStorReq: a restartable init container with
	// these requests (both 0: none).
	SidecarMemReq, SidecarStorReq int64
	// PodMemReq: a pod-level memory request (0: none).
	PodMemReq int64
	// Pending: admitted StartedAgo seconds before Start, no container
	// created yet (ContainerCreating): not in the summary.
	Pending    bool
	StartedAgo int64
}

// UID is the pod's UID as the kubelet knows it.
func (p Pod) UID() string { return "uid-" + p.Name }

// Scenario is one random node: layout, thresholds, pods, and the usage
// outside the pods on each resource.
type Scenario struct {
	Seed  uint64
	Minor int
	// ImageFs: a dedicated image filesystem; Split: the writable layers
	// are on nodefs (a separate container filesystem).
	ImageFs, Split           bool
	Hard, Soft, Grace, MinRe map[string]string
	MaxGrace                 int64
	Pods                     []Pod
	MemCap, MemOther         int64
	AllocCap                 int64
	NodeCap, NodeOther       int64
	ImageCap, ImageOther     int64
	NodeICap, NodeIOther     int64
	ImageICap, ImageIOther   int64
	PIDMax, PIDOther         int64
	Families                 []string
}

func (s *Scenario) String() string {
	return fmt.Sprintf("seed %d (%s; layout imageFs=%v split=%v; %d pods; hard %v soft %v minReclaim %v)", s.Seed, s.Families, s.ImageFs, s.Split, len(s.Pods), s.Hard, s.Soft, s.MinRe)
}

// Features of k8s.io/api a release has, by minor.
func sidecarsIn(minor int) bool { return minor >= 28 } // initContainers[].restartPolicy
func podLevelIn(minor int) bool { return minor >= 32 } // spec.resources
func splitIn(minor int) bool    { return minor >= 29 } // runtime containerFs stats, KubeletSeparateDiskGC

// Generate draws a node for release 1.minor: a layout, one or two signal
// families under pressure, pods of every QoS class with ties, critical and
// static pods, local-storage violations, sidecars and pod-level requests
// where that release's API has them.
func Generate(seed uint64, maxPods, minor int) *Scenario {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	pick := func(vs ...int64) int64 { return vs[rng.IntN(len(vs))] }
	s := &Scenario{Seed: seed, Minor: minor, Hard: map[string]string{}, MaxGrace: pick(0, 30), MemCap: 8192 * Mi, AllocCap: 7680 * Mi,
		NodeCap: 100 << 30, ImageCap: 200 << 30, NodeICap: 1_000_000, ImageICap: 2_000_000, PIDMax: 10_000}
	switch rng.IntN(3) {
	case 1:
		s.ImageFs = true
	case 2:
		// Before 1.29 there is no separate container filesystem: the
		// draw stays a dedicated imagefs.
		s.ImageFs, s.Split = true, splitIn(minor)
	}
	n := 2 + rng.IntN(maxPods-1)
	for i := 0; i < n; i++ {
		p := Pod{Name: fmt.Sprintf("p%02d", i), Prio: int32(pick(0, 0, 100, 1000)),
			WS: pick(64, 128, 256, 512) * Mi, Procs: pick(10, 50, 200),
			Root: pick(1, 2, 4) << 30, Logs: pick(0, 1) << 28, Vol: pick(0, 1, 3) << 30,
			RootI: pick(1000, 5000), LogsI: pick(0, 10), VolI: pick(0, 2000, 20000)}
		switch rng.IntN(4) { // QoS class and memory request
		case 0: // BestEffort
		case 1:
			p.MemReq, p.MemLim = p.WS, p.WS // Guaranteed, at its request
		case 2:
			p.MemReq = pick(p.WS/2, 2*p.WS) // Burstable, over or under
		case 3:
			p.MemReq, p.MemLim = p.WS/2, 4*p.WS
		}
		if rng.IntN(3) == 0 {
			p.StorReq = pick(1<<30, 8<<30)
		}
		switch rng.IntN(20) {
		case 0:
			p.Critical = "static"
		case 1:
			p.Critical, p.Prio = "priority", 2000000000
		}
		if rng.IntN(12) == 0 { // a local-storage violation
			if rng.IntN(2) == 0 && p.Vol > 0 {
				p.SizeLimit = p.Vol / 2
			} else {
				p.StorLim = (p.Root + p.Logs + p.Vol) / 2
			}
		}
		if rng.IntN(3) == 0 {
			g := pick(5, 60)
			p.TGPS = &g
		}
		// A sidecar's requests add to the regular containers' only where
		// the kubelet's request helper knows sidecars.
		if rng.IntN(6) == 0 && sidecarsIn(minor) {
			p.SidecarMemReq = pick(p.WS/4, p.WS)
			if rng.IntN(2) == 0 {
				p.SidecarStorReq = pick(1<<30, 4<<30)
			}
		}
		if rng.IntN(6) == 0 && podLevelIn(minor) && p.MemLim == 0 {
			p.PodMemReq = pick(p.WS/2, 2*p.WS)
		}
		s.Pods = append(s.Pods, p)
		for rng.IntN(3) == 0 && i < n-1 { // identical replicas: exact ties
			i++
			q := p
			q.Name = fmt.Sprintf("p%02d", i)
			s.Pods = append(s.Pods, q)
		}
	}
	var ws, procs, nb, ni, ib, ii int64
	for _, p := range s.Pods {
		ws += p.WS
		procs += p.Procs
		b, in, xb, xi := s.podDisk(p)
		nb, ni, ib, ii = nb+b, ni+in, ib+xb, ii+xi
	}
	// Room for every pod on every resource, so that only the families
	// chosen below are under pressure.
	s.MemCap = max(s.MemCap, 3*ws)
	s.AllocCap = s.MemCap - 512*Mi
	s.NodeCap, s.ImageCap = max(s.NodeCap, 3*nb), max(s.ImageCap, 3*ib)
	s.NodeICap, s.ImageICap = max(s.NodeICap, 3*ni), max(s.ImageICap, 3*ii)
	s.PIDMax = max(s.PIDMax, 3*procs)
	// Headroom everywhere first, then pressure on one or two families.
	s.MemOther, s.NodeOther, s.ImageOther, s.NodeIOther, s.ImageIOther, s.PIDOther = 0, 0, 0, 0, 0, 100
	s.Hard["memory.available"] = "100Mi"
	s.Hard["nodefs.available"] = "10%"
	s.Hard["nodefs.inodesFree"] = "5%"
	s.Hard["imagefs.available"] = "15%"
	s.Hard["imagefs.inodesFree"] = "5%"
	s.Hard["pid.available"] = "5%"
	families := []string{"memory", "allocatable", "pid", "nodefs", "nodefs.inodes", "imagefs", "imagefs.inodes"}
	primary := families[rng.IntN(len(families))]
	if !s.ImageFs && (primary == "imagefs" || primary == "imagefs.inodes") {
		primary = "nodefs"
	}
	if s.Split && primary == "imagefs.inodes" {
		primary = "nodefs.inodes" // images only: no pod frees any
	}
	if s.Split && primary == "imagefs" {
		primary = "nodefs"
	}
	s.Families = []string{primary}
	if primary != "memory" && primary != "allocatable" && rng.IntN(4) == 0 {
		s.Families = append(s.Families, "memory") // memory goes first, then the other
	}
	soft := len(s.Families) == 1 && rng.IntN(3) == 0
	for _, f := range s.Families {
		// set threshold T and usage so that available = T - deficit, with
		// the deficit a random share of what the pods free.
		frac := 0.1 + 0.8*rng.Float64()
		switch f {
		case "memory", "allocatable":
			T := pick(100, 256, 512) * Mi
			avail := max(T-int64(frac*float64(ws)), Mi)
			s.Hard["memory.available"] = fmt.Sprint(T/Mi) + "Mi"
			if f == "memory" {
				s.MemOther = s.MemCap - avail - ws
			} else {
				s.AllocCap = ws + avail
				s.MemOther = 0
			}
			if rng.IntN(3) == 0 {
				s.MinRe = map[string]string{"memory.available": fmt.Sprint(pick(50, 200)) + "Mi"}
			}
			if soft && f == "memory" {
				s.Soft = map[string]string{"memory.available": fmt.Sprint((T+T/2)/Mi) + "Mi"}
				s.Grace = map[string]string{"memory.available": "30s"}
				if rng.IntN(2) == 0 { // soft only
					s.Hard["memory.available"] = fmt.Sprint(avail/Mi/2+1) + "Mi"
				}
			}
		case "pid":
			T := s.PIDMax * 5 / 100
			avail := max(T-int64(frac*float64(procs)), 1)
			s.PIDOther = s.PIDMax - avail - procs
		case "nodefs", "imagefs":
			capacity, total := s.NodeCap, nb
			if f == "imagefs" {
				capacity, total = s.ImageCap, ib
			}
			pct := pick(10, 15)
			T := capacity * pct / 100
			avail := max(T-int64(frac*float64(total)), 1<<20)
			other := capacity - avail - total
			if f == "nodefs" {
				s.NodeOther, s.Hard["nodefs.available"] = other, fmt.Sprint(pct)+"%"
			} else {
				s.ImageOther, s.Hard["imagefs.available"] = other, fmt.Sprint(pct)+"%"
			}
			if rng.IntN(3) == 0 {
				s.MinRe = map[string]string{f + ".available": "2Gi"}
			}
		case "nodefs.inodes", "imagefs.inodes":
			capacity, total := s.NodeICap, ni
			if f == "imagefs.inodes" {
				capacity, total = s.ImageICap, ii
			}
			T := capacity * 5 / 100
			avail := max(T-int64(frac*float64(total)), 1)
			if f == "nodefs.inodes" {
				s.NodeIOther = capacity - avail - total
			} else {
				s.ImageIOther = capacity - avail - total
			}
		}
	}
	return s
}

// podDisk is what a pod puts on nodefs, imagefs (bytes, inodes) in this layout.
func (s *Scenario) podDisk(p Pod) (nb, ni, ib, ii int64) {
	if s.ImageFs && !s.Split {
		return p.Logs + p.Vol, p.LogsI + p.VolI, p.Root, p.RootI
	}
	return p.Root + p.Logs + p.Vol, p.RootI + p.LogsI + p.VolI, 0, 0
}

// Config is the kubelet's eviction configuration of the scenario.
type Config struct {
	Hard       map[string]string `json:"hard"`
	Soft       map[string]string `json:"soft,omitempty"`
	Grace      map[string]string `json:"grace,omitempty"`
	MinReclaim map[string]string `json:"minReclaim,omitempty"`
	// MaxPodGrace is evictionMaxPodGracePeriod.
	MaxPodGrace int64 `json:"maxPodGrace"`
	// EnforceNodeAllocatable is always "pods".
	EnforceNodeAllocatable []string `json:"enforceNodeAllocatable"`
	ImageFs                bool     `json:"imageFs"`
	SplitContainerFs       bool     `json:"splitContainerFs"`
}

// Config returns the thresholds and layout.
func (s *Scenario) Config() Config {
	return Config{Hard: s.Hard, Soft: s.Soft, Grace: s.Grace, MinReclaim: s.MinRe, MaxPodGrace: s.MaxGrace,
		EnforceNodeAllocatable: []string{"pods"}, ImageFs: s.ImageFs, SplitContainerFs: s.Split}
}

// KubeletPods are the pods as the kubelet holds them (a static pod with its
// own UID), as v1.Pod JSON.
func (s *Scenario) KubeletPods() []json.RawMessage { return s.pods(false) }

// APIPods are the pods as the API server shows them (a static pod's mirror).
func (s *Scenario) APIPods() []json.RawMessage { return s.pods(true) }

func (s *Scenario) pods(mirror bool) []json.RawMessage {
	out := make([]json.RawMessage, len(s.Pods))
	for i, p := range s.Pods {
		out[i] = mustJSON(p.object(mirror))
	}
	return out
}

func qty(v int64) string { return fmt.Sprint(v) }

func (p Pod) object(mirror bool) map[string]any {
	req, lim := map[string]any{}, map[string]any{}
	if p.MemReq > 0 {
		req["memory"] = qty(p.MemReq)
	}
	if p.MemLim > 0 {
		lim["memory"] = qty(p.MemLim)
	}
	if p.MemReq > 0 && p.MemReq == p.MemLim {
		req["cpu"], lim["cpu"] = "100m", "100m"
	}
	if p.StorReq > 0 {
		req["ephemeral-storage"] = qty(p.StorReq)
	}
	if p.StorLim > 0 {
		lim["ephemeral-storage"] = qty(p.StorLim)
	}
	resources := map[string]any{}
	if len(req) > 0 {
		resources["requests"] = req
	}
	if len(lim) > 0 {
		resources["limits"] = lim
	}
	emptyDir := map[string]any{}
	if p.SizeLimit > 0 {
		emptyDir["sizeLimit"] = qty(p.SizeLimit)
	}
	spec := map[string]any{
		"nodeName":   NodeName,
		"priority":   p.Prio,
		"containers": []any{map[string]any{"name": "c", "image": "x", "resources": resources}},
		"volumes":    []any{map[string]any{"name": "data", "emptyDir": emptyDir}},
	}
	if p.TGPS != nil {
		spec["terminationGracePeriodSeconds"] = *p.TGPS
	}
	if p.SidecarMemReq > 0 {
		sreq := map[string]any{"memory": qty(p.SidecarMemReq)}
		if p.SidecarStorReq > 0 {
			sreq["ephemeral-storage"] = qty(p.SidecarStorReq)
		}
		spec["initContainers"] = []any{map[string]any{"name": "side", "image": "x", "restartPolicy": "Always",
			"resources": map[string]any{"requests": sreq}}}
	}
	if p.PodMemReq > 0 {
		spec["resources"] = map[string]any{"requests": map[string]any{"memory": qty(p.PodMemReq)}}
	}
	meta := map[string]any{"name": p.Name, "namespace": "ns", "uid": p.UID()}
	if p.Critical == "static" {
		ann := map[string]any{"kubernetes.io/config.source": "file"}
		if mirror {
			meta["uid"] = "mirror-" + p.UID()
			ann["kubernetes.io/config.mirror"] = p.UID()
		}
		meta["annotations"] = ann
	}
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": p.status()}
}

func (p Pod) status() map[string]any {
	if !p.Pending {
		return map[string]any{"phase": "Running"}
	}
	waiting := map[string]any{"waiting": map[string]any{"reason": "ContainerCreating"}}
	return map[string]any{"phase": "Pending", "startTime": Start.Add(-time.Duration(p.StartedAgo) * time.Second).Format(time.RFC3339),
		"containerStatuses": []any{map[string]any{"name": "c", "image": "x", "imageID": "", "ready": false, "restartCount": 0, "state": waiting}}}
}

// Summary is the node's stats summary (statsapi.Summary JSON) with the pods
// named in running still running, at time now.
func (s *Scenario) Summary(running map[string]bool, now time.Time) json.RawMessage {
	ts := now.UTC().Format(time.RFC3339)
	var ws, procs, nb, ni, ib, ii int64
	var pods []any
	for _, p := range s.Pods {
		if !running[p.Name] || p.Pending {
			continue
		}
		ws += p.WS
		procs += p.Procs
		b, i, xb, xi := s.podDisk(p)
		nb, ni, ib, ii = nb+b, ni+i, ib+xb, ii+xi
		fs := func(bytes, inodes int64) map[string]any {
			return map[string]any{"time": ts, "usedBytes": max(bytes, 0), "inodesUsed": max(inodes, 0)}
		}
		mem := map[string]any{"time": ts, "workingSetBytes": p.WS}
		pods = append(pods, map[string]any{
			"podRef":    map[string]any{"name": p.Name, "namespace": "ns", "uid": p.UID()},
			"startTime": ts,
			"containers": []any{map[string]any{"name": "c", "startTime": ts, "memory": mem,
				"rootfs": fs(p.Root, p.RootI), "logs": fs(p.Logs, p.LogsI)}},
			"memory":            mem,
			"volume":            []any{merge(fs(p.Vol, p.VolI), map[string]any{"name": "data"})},
			"ephemeral-storage": map[string]any{"time": ts, "usedBytes": p.Root + p.Logs + p.Vol},
			"process_stats":     map[string]any{"process_count": p.Procs},
		})
	}
	fs := func(capB, usedB, capI, usedI int64) map[string]any {
		return map[string]any{"time": ts, "capacityBytes": max(capB, 0), "availableBytes": max(capB-usedB, 0), "usedBytes": max(usedB, 0),
			"inodes": max(capI, 0), "inodesFree": max(capI-usedI, 0), "inodesUsed": max(usedI, 0)}
	}
	nodeFs := fs(s.NodeCap, s.NodeOther+nb, s.NodeICap, s.NodeIOther+ni)
	imageFs, containerFs := nodeFs, nodeFs
	if s.ImageFs {
		imageFs = fs(s.ImageCap, s.ImageOther+ib, s.ImageICap, s.ImageIOther+ii)
		containerFs = imageFs
		if s.Split {
			containerFs = nodeFs
		}
	}
	runtime := map[string]any{"imageFs": imageFs}
	if splitIn(s.Minor) {
		runtime["containerFs"] = containerFs
	}
	memUsed := s.MemOther + ws
	node := map[string]any{
		"nodeName":  NodeName,
		"startTime": ts,
		"memory":    map[string]any{"time": ts, "availableBytes": max(s.MemCap-memUsed, 0), "workingSetBytes": max(memUsed, 0)},
		"fs":        nodeFs,
		"runtime":   runtime,
		"rlimit":    map[string]any{"time": ts, "maxpid": s.PIDMax, "curproc": s.PIDOther + procs},
		"systemContainers": []any{map[string]any{"name": "pods", "startTime": ts,
			"memory": map[string]any{"time": ts, "availableBytes": max(s.AllocCap-ws, 0), "workingSetBytes": ws}}},
	}
	return mustJSON(map[string]any{"node": node, "pods": pods})
}

func merge(a, b map[string]any) map[string]any {
	for k, v := range b {
		a[k] = v
	}
	return a
}

// AllRunning is every pod of the scenario.
func (s *Scenario) AllRunning() map[string]bool {
	out := map[string]bool{}
	for _, p := range s.Pods {
		out[p.Name] = true
	}
	return out
}

// Order is the order of the kubelet's pod list in one run: the kubelet's
// pod map was filled in an order the plugin cannot know (admission order,
// with reused slots), so each run gets a seeded permutation of the pods.
func (s *Scenario) Order(run uint64) []int {
	return rand.New(rand.NewPCG(s.Seed, run)).Perm(len(s.Pods))
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings and numbers always marshal
	}
	return b
}
