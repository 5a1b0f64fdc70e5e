package inprocess

// The kubelet's real eviction manager (k8s.io/kubernetes
// pkg/kubelet/eviction, 1.37) on seeded random nodes, compared with the
// plugin's pkg/eviction prediction made beforehand: every determined step
// and grace period must match in every run, and every printed probability
// must be within chance.Tolerance of the measured frequency.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	kubeeviction "k8s.io/kubernetes/pkg/kubelet/eviction"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/scale-preview/scale-preview/pkg/eviction"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/test/internal/chance"
)

const evictMi = int64(1) << 20

// evictPodSpec is one pod of a random node and its usage.
type evictPodSpec struct {
	name               string
	prio               int32
	critical           string // "", "static", "priority"
	memReq, memLim     int64
	storReq, storLim   int64
	ws, procs          int64
	root, logs, vol    int64 // bytes
	rootI, logsI, volI int64 // inodes
	sizeLimit          int64 // emptyDir sizeLimit (0: none)
	tgps               *int64
}

// evictScenario is one random node: layout, thresholds, pods, and the
// usage outside the pods on each resource.
type evictScenario struct {
	seed                     uint64
	imageFs, split           bool
	hard, soft, grace, minRe map[string]string
	maxGrace                 int64
	pods                     []evictPodSpec
	memCap, memOther         int64
	allocCap                 int64
	nodeCap, nodeOther       int64
	imageCap, imageOther     int64
	nodeICap, nodeIOther     int64
	imageICap, imageIOther   int64
	pidMax, pidOther         int64
	families                 []string
}

func (p evictPodSpec) uid() string { return "uid-" + p.name }

// kubeletPod is the pod as the kubelet holds it (a static pod with its own
// UID); apiPod is what the API server shows (a static pod's mirror).
func (p evictPodSpec) kubeletPod(mirror bool) *v1.Pod {
	res := v1.ResourceRequirements{Requests: v1.ResourceList{}, Limits: v1.ResourceList{}}
	if p.memReq > 0 {
		res.Requests[v1.ResourceMemory] = *resource.NewQuantity(p.memReq, resource.BinarySI)
	}
	if p.memLim > 0 {
		res.Limits[v1.ResourceMemory] = *resource.NewQuantity(p.memLim, resource.BinarySI)
	}
	if p.memReq > 0 && p.memReq == p.memLim {
		res.Requests[v1.ResourceCPU] = resource.MustParse("100m")
		res.Limits[v1.ResourceCPU] = resource.MustParse("100m")
	}
	if p.storReq > 0 {
		res.Requests[v1.ResourceEphemeralStorage] = *resource.NewQuantity(p.storReq, resource.BinarySI)
	}
	if p.storLim > 0 {
		res.Limits[v1.ResourceEphemeralStorage] = *resource.NewQuantity(p.storLim, resource.BinarySI)
	}
	prio := p.prio
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: "ns", UID: types.UID(p.uid())},
		Spec: v1.PodSpec{NodeName: "evict-node", Priority: &prio, TerminationGracePeriodSeconds: p.tgps,
			Containers: []v1.Container{{Name: "c", Image: "x", Resources: res}},
			Volumes:    []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}},
		Status: v1.PodStatus{Phase: v1.PodRunning}}
	if p.sizeLimit > 0 {
		pod.Spec.Volumes[0].EmptyDir.SizeLimit = resource.NewQuantity(p.sizeLimit, resource.BinarySI)
	}
	if p.critical == "static" {
		pod.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
		if mirror {
			pod.UID = types.UID("mirror-" + p.uid())
			pod.Annotations[v1.MirrorPodAnnotationKey] = p.uid()
		}
	}
	return pod
}

func evictU(v int64) *uint64 { x := uint64(max(v, 0)); return &x }

// podDisk is what a pod puts on nodefs, imagefs (bytes, inodes) in this layout.
func (s *evictScenario) podDisk(p evictPodSpec) (nb, ni, ib, ii int64) {
	switch {
	case s.imageFs && !s.split:
		return p.logs + p.vol, p.logsI + p.volI, p.root, p.rootI
	case s.imageFs && s.split:
		return p.root + p.logs + p.vol, p.rootI + p.logsI + p.volI, 0, 0
	}
	return p.root + p.logs + p.vol, p.rootI + p.logsI + p.volI, 0, 0
}

// summary is the node's stats with these pods running, at time now.
func (s *evictScenario) summary(active map[string]evictPodSpec, now time.Time) *statsapi.Summary {
	ts := metav1.NewTime(now)
	var ws, procs, nb, ni, ib, ii int64
	var pods []statsapi.PodStats
	for _, name := range slices.Sorted(maps.Keys(active)) {
		p := active[name]
		ws += p.ws
		procs += p.procs
		b, i, xb, xi := s.podDisk(p)
		nb, ni, ib, ii = nb+b, ni+i, ib+xb, ii+xi
		pods = append(pods, statsapi.PodStats{PodRef: statsapi.PodReference{Name: p.name, Namespace: "ns", UID: p.uid()}, StartTime: ts,
			Containers: []statsapi.ContainerStats{{Name: "c", StartTime: ts, Memory: &statsapi.MemoryStats{Time: ts, WorkingSetBytes: evictU(p.ws)},
				Rootfs: &statsapi.FsStats{Time: ts, UsedBytes: evictU(p.root), InodesUsed: evictU(p.rootI)},
				Logs:   &statsapi.FsStats{Time: ts, UsedBytes: evictU(p.logs), InodesUsed: evictU(p.logsI)}}},
			Memory:           &statsapi.MemoryStats{Time: ts, WorkingSetBytes: evictU(p.ws)},
			VolumeStats:      []statsapi.VolumeStats{{Name: "data", FsStats: statsapi.FsStats{Time: ts, UsedBytes: evictU(p.vol), InodesUsed: evictU(p.volI)}}},
			EphemeralStorage: &statsapi.FsStats{Time: ts, UsedBytes: evictU(p.root + p.logs + p.vol)},
			ProcessStats:     &statsapi.ProcessStats{ProcessCount: evictU(p.procs)}})
	}
	fs := func(capB, usedB, capI, usedI int64) *statsapi.FsStats {
		return &statsapi.FsStats{Time: ts, CapacityBytes: evictU(capB), AvailableBytes: evictU(capB - usedB), UsedBytes: evictU(usedB),
			Inodes: evictU(capI), InodesFree: evictU(capI - usedI), InodesUsed: evictU(usedI)}
	}
	nodeFs := fs(s.nodeCap, s.nodeOther+nb, s.nodeICap, s.nodeIOther+ni)
	imageFs, containerFs := nodeFs, nodeFs
	if s.imageFs {
		imageFs = fs(s.imageCap, s.imageOther+ib, s.imageICap, s.imageIOther+ii)
		containerFs = imageFs
		if s.split {
			containerFs = nodeFs
		}
	}
	memUsed := s.memOther + ws
	maxPID, cur := s.pidMax, s.pidOther+procs
	return &statsapi.Summary{Node: statsapi.NodeStats{NodeName: "evict-node", StartTime: ts,
		Memory:  &statsapi.MemoryStats{Time: ts, AvailableBytes: evictU(s.memCap - memUsed), WorkingSetBytes: evictU(memUsed)},
		Fs:      nodeFs,
		Runtime: &statsapi.RuntimeStats{ImageFs: imageFs, ContainerFs: containerFs},
		Rlimit:  &statsapi.RlimitStats{Time: ts, MaxPID: &maxPID, NumOfRunningProcesses: &cur},
		SystemContainers: []statsapi.ContainerStats{{Name: statsapi.SystemContainerPods, StartTime: ts,
			Memory: &statsapi.MemoryStats{Time: ts, AvailableBytes: evictU(s.allocCap - ws), WorkingSetBytes: evictU(ws)}}}},
		Pods: pods}
}

// evictKill is one pod the kubelet killed: in which sync with kills, and
// the grace period it passed.
type evictKill struct {
	step  int
	grace int64
}

// evictRun drives the real eviction manager until it has been quiet for a
// while, and returns what it killed.
func evictRun(t *testing.T, s *evictScenario, run uint64) map[string]evictKill {
	t.Helper()
	// The kubelet's pod map was filled in an order the plugin cannot know
	// (admission order, with reused slots): a random one per run.
	order := rand.New(rand.NewPCG(s.seed, run)).Perm(len(s.pods))
	clock := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var mu sync.Mutex
	active := map[string]evictPodSpec{}
	kubeletPods := map[types.UID]*v1.Pod{}
	for _, i := range order {
		p := s.pods[i]
		active[p.name] = p
		kubeletPods[types.UID(p.uid())] = p.kubeletPod(false)
	}
	kills := map[string]evictKill{}
	step, getsSinceKill, quiet := 0, 1, 0
	done := make(chan struct{})
	var once sync.Once
	provider := evictSummaryFunc(func() *statsapi.Summary {
		mu.Lock()
		defer mu.Unlock()
		clock.Step(10 * time.Second)
		getsSinceKill++
		quiet++
		if quiet > 40 {
			once.Do(func() { close(done) })
		}
		return s.summary(active, clock.Now())
	})
	kill := func(pod *v1.Pod, _ bool, grace *int64, _ func(*v1.PodStatus)) error {
		mu.Lock()
		defer mu.Unlock()
		if getsSinceKill > 0 {
			step++
		}
		getsSinceKill, quiet = 0, 0
		kills[pod.Name] = evictKill{step: step, grace: *grace}
		delete(active, pod.Name)
		delete(kubeletPods, pod.UID)
		return nil
	}
	hard, err := kubeeviction.ParseThresholdConfig([]string{"pods"}, s.hard, s.soft, s.grace, s.minRe)
	if err != nil {
		t.Fatalf("seed %d: the kubelet rejects the thresholds: %v", s.seed, err)
	}
	cfg := kubeeviction.Config{PressureTransitionPeriod: 5 * time.Minute, MaxPodGracePeriodSeconds: s.maxGrace, Thresholds: hard}
	mgr, _ := kubeeviction.NewManager(provider, cfg, kill, evictNoGC{}, evictNoGC{}, &record.FakeRecorder{},
		&v1.ObjectReference{Kind: "Node", Name: "evict-node"}, clock, true)
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logr.Discard()))
	defer cancel()
	podFunc := func() []*v1.Pod { // the kubelet's pod manager: map order
		mu.Lock()
		defer mu.Unlock()
		out := make([]*v1.Pod, 0, len(kubeletPods))
		for _, p := range kubeletPods {
			out = append(out, p)
		}
		return out
	}
	mgr.Start(ctx, evictDisks{s.imageFs, s.split}, podFunc, func(*v1.Pod) bool { return true }, 20*time.Microsecond)
	go func() { // waitForPodsCleanup waits on the fake clock's ticker
		for ctx.Err() == nil {
			if clock.HasWaiters() {
				clock.Step(time.Second)
			}
			time.Sleep(20 * time.Microsecond)
		}
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("seed %d: the eviction manager did not settle", s.seed)
	}
	cancel()
	mu.Lock()
	defer mu.Unlock()
	return maps.Clone(kills)
}

type evictSummaryFunc func() *statsapi.Summary

func (f evictSummaryFunc) Get(context.Context, bool) (*statsapi.Summary, error) { return f(), nil }
func (f evictSummaryFunc) GetCPUAndMemoryStats(context.Context) (*statsapi.Summary, error) {
	return f(), nil
}

type evictNoGC struct{}

func (evictNoGC) DeleteUnusedImages(context.Context) error        { return nil }
func (evictNoGC) DeleteAllUnusedContainers(context.Context) error { return nil }

type evictDisks struct{ imageFs, split bool }

func (d evictDisks) HasDedicatedImageFs(context.Context) (bool, error)     { return d.imageFs, nil }
func (d evictDisks) HasDedicatedContainerFs(context.Context) (bool, error) { return d.split, nil }

// evictPredict is the plugin's answer from the API's view of the node and
// the summary as kubectl get --raw prints it.
func evictPredict(t *testing.T, s *evictScenario) *eviction.Result {
	t.Helper()
	active := map[string]evictPodSpec{}
	var pods []*v1.Pod
	for _, p := range s.pods {
		active[p.name] = p
		pods = append(pods, p.kubeletPod(true))
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	raw, err := json.Marshal(s.summary(active, now))
	if err != nil {
		t.Fatal(err)
	}
	sum := &statsapi.Summary{} // as the plugin reads kubectl get --raw's output
	if err := json.Unmarshal(raw, sum); err != nil {
		t.Fatal(err)
	}
	r, err := rules.For(37, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := eviction.ConfigFrom(&eviction.KubeletConfiguration{EvictionHard: s.hard, EvictionSoft: s.soft, EvictionSoftGracePeriod: s.grace,
		EvictionMinimumReclaim: s.minRe, EvictionMaxPodGracePeriod: int32(s.maxGrace), EnforceNodeAllocatable: []string{"pods"}}, r.Kubelet)
	if err != nil {
		t.Fatalf("seed %d: the plugin rejects thresholds the kubelet accepts: %v", s.seed, err)
	}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "evict-node"}}
	res, err := eviction.Predict(eviction.Input{Node: node, Pods: pods, Summary: sum, Config: cfg, Rules: r, Now: now})
	if err != nil {
		t.Fatalf("seed %d: %v", s.seed, err)
	}
	return res
}

func (s *evictScenario) String() string {
	return fmt.Sprintf("seed %d (%s; layout imageFs=%v split=%v; %d pods; hard %v soft %v minReclaim %v)", s.seed, s.families, s.imageFs, s.split, len(s.pods), s.hard, s.soft, s.minRe)
}

func TestEvictionAgainstKubelet(t *testing.T) {
	scenarios, maxPods, runs := 300, 24, 60
	if testing.Short() {
		scenarios, maxPods, runs = 30, 8, 24
	}
	var determined, judged, off int
	for i := range scenarios {
		s := evictRandomScenario(uint64(i+1), maxPods)
		pred := evictPredict(t, s)
		n := 1
		if !pred.Certain {
			n = runs
		}
		freq := map[string]int{}
		for run := range n {
			kills := evictRun(t, s, uint64(run))
			for _, c := range pred.Order {
				name := c.Pod[len("ns/"):]
				k, killed := kills[name]
				if killed {
					freq[name]++
				}
				if !c.Certain {
					continue
				}
				determined++
				switch {
				case c.Step == 0 && killed:
					t.Errorf("%s: %s predicted to stay, the kubelet evicted it in sync %d", s, name, k.step)
				case c.Step > 0 && !killed:
					t.Errorf("%s: %s predicted evicted in sync %d, the kubelet kept it", s, name, c.Step)
				case c.Step > 0 && k.step != c.Step:
					t.Errorf("%s: %s predicted evicted in sync %d, the kubelet evicted it in sync %d", s, name, c.Step, k.step)
				case killed && len(c.GraceAlternatives) == 0 && c.GracePeriodSeconds != nil && *c.GracePeriodSeconds != k.grace:
					t.Errorf("%s: %s predicted grace %ds, the kubelet gave %ds", s, name, *c.GracePeriodSeconds, k.grace)
				}
			}
		}
		if pred.Certain || pred.Uncertain != nil && evictSignalRace(pred) {
			continue
		}
		for _, c := range pred.Order {
			if c.Certain {
				continue
			}
			name := c.Pod[len("ns/"):]
			judged++
			if chance.BeyondNoise(freq[name], n, c.EvictProbability) {
				off++
				t.Errorf("%s: %s printed %.2f, measured %d of %d", s, name, c.EvictProbability, freq[name], n)
			}
		}
	}
	t.Logf("%d scenarios: %d determined fates compared, %d probabilities judged, %d off beyond chance", scenarios, determined, judged, off)
}

// evictSignalRace: several signals met at once whose choice is map order;
// the printed odds are a stated assumption, not judged.
func evictSignalRace(r *eviction.Result) bool {
	for _, u := range r.Uncertain {
		if len(u) > 0 && slices.Contains([]bool{true}, len(u) > 20 && u[len(u)-12:] == "equal odds)") {
			return true
		}
	}
	return false
}

// evictRandomScenario draws a node: a layout, one or two signal families
// under pressure, pods of every QoS class with ties, critical and static
// pods, local-storage violations.
func evictRandomScenario(seed uint64, maxPods int) *evictScenario {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	pick := func(vs ...int64) int64 { return vs[rng.IntN(len(vs))] }
	s := &evictScenario{seed: seed, hard: map[string]string{}, maxGrace: pick(0, 30), memCap: 8192 * evictMi, allocCap: 7680 * evictMi,
		nodeCap: 100 << 30, imageCap: 200 << 30, nodeICap: 1_000_000, imageICap: 2_000_000, pidMax: 10_000}
	switch rng.IntN(3) {
	case 1:
		s.imageFs = true
	case 2:
		s.imageFs, s.split = true, true
	}
	n := 2 + rng.IntN(maxPods-1)
	for i := 0; i < n; i++ {
		p := evictPodSpec{name: fmt.Sprintf("p%02d", i), prio: int32(pick(0, 0, 100, 1000)),
			ws: pick(64, 128, 256, 512) * evictMi, procs: pick(10, 50, 200),
			root: pick(1, 2, 4) << 30, logs: pick(0, 1) << 28, vol: pick(0, 1, 3) << 30,
			rootI: pick(1000, 5000), logsI: pick(0, 10), volI: pick(0, 2000, 20000)}
		switch rng.IntN(4) { // QoS class and memory request
		case 0: // BestEffort
		case 1:
			p.memReq, p.memLim = p.ws, p.ws // Guaranteed, at its request
		case 2:
			p.memReq = pick(p.ws/2, 2*p.ws) // Burstable, over or under
		case 3:
			p.memReq, p.memLim = p.ws/2, 4*p.ws
		}
		if rng.IntN(3) == 0 {
			p.storReq = pick(1<<30, 8<<30)
		}
		switch rng.IntN(20) {
		case 0:
			p.critical = "static"
		case 1:
			p.critical, p.prio = "priority", 2000000000
		}
		if rng.IntN(12) == 0 { // a local-storage violation
			if rng.IntN(2) == 0 && p.vol > 0 {
				p.sizeLimit = p.vol / 2
			} else {
				p.storLim = (p.root + p.logs + p.vol) / 2
			}
		}
		if rng.IntN(3) == 0 {
			g := pick(5, 60)
			p.tgps = &g
		}
		s.pods = append(s.pods, p)
		for rng.IntN(3) == 0 && i < n-1 { // identical replicas: exact ties
			i++
			q := p
			q.name = fmt.Sprintf("p%02d", i)
			s.pods = append(s.pods, q)
		}
	}
	var ws, procs, nb, ni, ib, ii int64
	for _, p := range s.pods {
		ws += p.ws
		procs += p.procs
		b, in, xb, xi := s.podDisk(p)
		nb, ni, ib, ii = nb+b, ni+in, ib+xb, ii+xi
	}
	// Room for every pod on every resource, so that only the families
	// chosen below are under pressure.
	s.memCap = max(s.memCap, 3*ws)
	s.allocCap = s.memCap - 512*evictMi
	s.nodeCap, s.imageCap = max(s.nodeCap, 3*nb), max(s.imageCap, 3*ib)
	s.nodeICap, s.imageICap = max(s.nodeICap, 3*ni), max(s.imageICap, 3*ii)
	s.pidMax = max(s.pidMax, 3*procs)
	// Headroom everywhere first, then pressure on one or two families.
	s.memOther, s.nodeOther, s.imageOther, s.nodeIOther, s.imageIOther, s.pidOther = 0, 0, 0, 0, 0, 100
	s.hard["memory.available"] = "100Mi"
	s.hard["nodefs.available"] = "10%"
	s.hard["nodefs.inodesFree"] = "5%"
	s.hard["imagefs.available"] = "15%"
	s.hard["imagefs.inodesFree"] = "5%"
	s.hard["pid.available"] = "5%"
	families := []string{"memory", "allocatable", "pid", "nodefs", "nodefs.inodes", "imagefs", "imagefs.inodes"}
	primary := families[rng.IntN(len(families))]
	if !s.imageFs && (primary == "imagefs" || primary == "imagefs.inodes") {
		primary = "nodefs"
	}
	if s.split && primary == "imagefs.inodes" {
		primary = "nodefs.inodes" // images only: no pod frees any
	}
	if s.split && primary == "imagefs" {
		primary = "nodefs"
	}
	s.families = []string{primary}
	if primary != "memory" && primary != "allocatable" && rng.IntN(4) == 0 {
		s.families = append(s.families, "memory") // memory goes first, then the other
	}
	soft := len(s.families) == 1 && rng.IntN(3) == 0
	for _, f := range s.families {
		// set threshold T and usage so that available = T - deficit, with
		// the deficit a random share of what the pods free.
		frac := 0.1 + 0.8*rng.Float64()
		switch f {
		case "memory", "allocatable":
			T := pick(100, 256, 512) * evictMi
			avail := max(T-int64(frac*float64(ws)), evictMi)
			if f == "memory" {
				s.hard["memory.available"] = fmt.Sprint(T/evictMi) + "Mi"
				s.memOther = s.memCap - avail - ws
			} else {
				s.hard["memory.available"] = fmt.Sprint(T/evictMi) + "Mi"
				s.allocCap = ws + avail
				s.memOther = 0
			}
			if rng.IntN(3) == 0 {
				s.minRe = map[string]string{"memory.available": fmt.Sprint(pick(50, 200)) + "Mi"}
			}
			if soft && f == "memory" {
				s.soft = map[string]string{"memory.available": fmt.Sprint((T+T/2)/evictMi) + "Mi"}
				s.grace = map[string]string{"memory.available": "30s"}
				if rng.IntN(2) == 0 { // soft only
					s.hard["memory.available"] = fmt.Sprint(avail/evictMi/2+1) + "Mi"
				}
			}
		case "pid":
			T := s.pidMax * 5 / 100
			avail := max(T-int64(frac*float64(procs)), 1)
			s.pidOther = s.pidMax - avail - procs
		case "nodefs", "imagefs":
			capacity, total := s.nodeCap, nb
			if f == "imagefs" {
				capacity, total = s.imageCap, ib
			}
			pct := pick(10, 15)
			T := capacity * pct / 100
			avail := max(T-int64(frac*float64(total)), 1<<20)
			other := capacity - avail - total
			if f == "nodefs" {
				s.nodeOther, s.hard["nodefs.available"] = other, fmt.Sprint(pct)+"%"
			} else {
				s.imageOther, s.hard["imagefs.available"] = other, fmt.Sprint(pct)+"%"
			}
			if rng.IntN(3) == 0 {
				s.minRe = map[string]string{f + ".available": "2Gi"}
			}
		case "nodefs.inodes", "imagefs.inodes":
			capacity, total := s.nodeICap, ni
			if f == "imagefs.inodes" {
				capacity, total = s.imageICap, ii
			}
			T := capacity * 5 / 100
			avail := max(T-int64(frac*float64(total)), 1)
			if f == "nodefs.inodes" {
				s.nodeIOther = capacity - avail - total
			} else {
				s.imageIOther = capacity - avail - total
			}
		}
	}
	return s
}
