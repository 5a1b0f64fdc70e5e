// Package preemptgen generates the seeded random clusters on which the
// scheduler's preemption is compared with pkg/preemption: nodes, pods,
// PodDisruptionBudgets and a pending preemptor, as the JSON of the API
// objects. It imports only the standard library, so that the in-process
// 1.37 test and every test/versions/v1_NN module decode the same scenario
// into their own k8s.io/api types.
package preemptgen

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"
)

// Scenario is one random cluster and its pending pod.
type Scenario struct {
	Seed      uint64            `json:"seed"`
	What      string            `json:"what"`
	Nodes     []json.RawMessage `json:"nodes"`
	Pods      []json.RawMessage `json:"pods"`
	PDBs      []json.RawMessage `json:"pdbs"` // policy/v1 and policy/v1beta1 alike
	Preemptor json.RawMessage   `json:"preemptor"`
}

// Hash identifies the scenario's objects, so that a recorded answer is
// never judged against a cluster the generator has since changed.
func (s *Scenario) Hash() string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// T0 is the pods' creation time; start times are minutes after it.
var T0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	gpu        = "example.com/gpu"
	hostname   = "kubernetes.io/hostname"
	zone       = "topology.kubernetes.io/zone"
	dedicated  = "dedicated"
	preemptor  = "preemptor"
	namespace  = "default"
	schedName  = "default-scheduler"
	minSidecar = 28 // initContainers[].restartPolicy
	minDomains = 24 // topologySpreadConstraints[].minDomains
)

var apps = []string{"web", "api", "db", "batch"}

type node struct {
	name, zone         string
	cpuMilli, memBytes int64
	maxPods, gpus      int64
	tainted, unsched   bool
	ssd                bool
}

type term struct{ app, key string }

type pod struct {
	name, app, node, nominated, phase string
	prio                              int32
	cpuMilli, memBytes                int64
	startMin                          int // -1: no start time
	gpu, hostPort, overhead, sidecar  bool
	tolerateAll, deleting, preempted  bool
	anti                              *term
}

// Generate draws a cluster: 3-200 nodes in 1-3 zones, some tainted,
// unschedulable or small; pods of several priorities (equal ones too),
// requests and a GPU extended resource, host ports, anti-affinity; PDBs;
// nominated pods; a preemptor with a mix of constraints. Fields that
// k8s.io/api 1.<minor> lacks are left out (their random draws still
// happen, so that the rest of the cluster is the same in every release).
func Generate(seed uint64, minor int) *Scenario {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	var nNodes int
	switch x := r.IntN(10); {
	case x < 5:
		nNodes = 3 + r.IntN(8)
	case x < 8:
		nNodes = 10 + r.IntN(40)
	default:
		nNodes = 101 + r.IntN(100)
	}
	zones := 1 + r.IntN(3)
	prios := []int32{0, 10, 10, 100, 100, 1000}
	var features []string
	var nodes []*node
	for i := range nNodes {
		n := &node{name: fmt.Sprintf("node-%03d", i), zone: fmt.Sprintf("zone-%d", r.IntN(zones))}
		n.cpuMilli = int64(2000 + 1000*r.IntN(3))
		n.memBytes = int64(4+4*r.IntN(2)) << 30
		n.maxPods = int64([]int{110, 110, 110, 4}[r.IntN(4)])
		if r.IntN(4) == 0 {
			n.gpus = int64(1 + r.IntN(2))
		}
		n.tainted = r.IntN(8) == 0
		n.unsched = r.IntN(15) == 0
		n.ssd = r.IntN(3) == 0
		nodes = append(nodes, n)
	}
	useStart := r.IntN(6) != 0
	var pods []*pod
	mkPod := func(nodeName string, prio int32) *pod {
		p := &pod{name: fmt.Sprintf("p-%04d", len(pods)+1), app: apps[r.IntN(len(apps))], node: nodeName, prio: prio, phase: "Running", startMin: -1}
		p.cpuMilli = int64(100 * (1 + r.IntN(15)))
		p.memBytes = int64(256*(1+r.IntN(8))) << 20
		if nodeName == "" {
			p.phase = "Pending"
		}
		if useStart || r.IntN(3) != 0 {
			p.startMin = r.IntN(60) // minutes apart, with some equal start times
		}
		p.gpu = r.IntN(6) == 0
		p.hostPort = r.IntN(8) == 0
		if r.IntN(10) == 0 {
			key := hostname
			if r.IntN(3) == 0 {
				key = zone
			}
			p.anti = &term{app: apps[r.IntN(len(apps))], key: key}
		}
		p.overhead = r.IntN(20) == 0
		p.sidecar = r.IntN(15) == 0 && minor >= minSidecar
		p.tolerateAll = r.IntN(25) == 0
		pods = append(pods, p)
		return p
	}
	// Fill nodes by a request budget so that most are nearly full.
	for _, n := range nodes {
		if n.unsched && r.IntN(2) == 0 {
			continue
		}
		var used int64
		for k := int64(0); k < n.maxPods; k++ {
			p := mkPod(n.name, prios[r.IntN(len(prios))])
			if used+p.cpuMilli > n.cpuMilli {
				pods = pods[:len(pods)-1] // drawn but not placed
				break
			}
			if p.gpu && (n.gpus == 0 || r.IntN(2) == 0) {
				p.gpu = false
			}
			used += p.cpuMilli
		}
	}
	// A finished pod is invisible to the scheduler.
	if len(pods) > 0 && r.IntN(4) == 0 {
		pods[r.IntN(len(pods))].phase = "Succeeded"
	}
	prePrio := []int32{100, 1000, 1000, 1000, 10}[r.IntN(5)]
	// Nominated pods that already hold room.
	for range r.IntN(3) {
		if r.IntN(2) == 0 {
			continue
		}
		p := mkPod("", []int32{prePrio, prePrio + 1, 10}[r.IntN(3)])
		p.nominated = nodes[r.IntN(len(nodes))].name
		features = append(features, "nominated")
	}
	var pdbs []json.RawMessage
	for i, app := range apps {
		if r.IntN(3) != 0 {
			continue
		}
		selected := app
		allowed := r.IntN(3)
		if i == 3 && r.IntN(2) == 0 {
			selected = "nothing"
		}
		pdbs = append(pdbs, mustJSON(obj{
			"metadata": obj{"name": "pdb-" + app, "namespace": namespace},
			"spec":     obj{"minAvailable": 1, "selector": matchApp(selected)},
			"status":   obj{"disruptionsAllowed": allowed, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0},
		}))
		features = append(features, "pdb")
	}

	pre := mkPod("", prePrio)
	pods = pods[:len(pods)-1]
	pre.name = preemptor
	pre.anti, pre.hostPort = nil, false
	pre.cpuMilli = int64(500 + 250*r.IntN(8))
	preObj := pre.object()
	preSpec := preObj["spec"].(obj)
	preC := preSpec["containers"].([]obj)[0]
	if r.IntN(5) == 0 {
		pre.gpu = true
		preC["resources"] = pre.resources()
		features = append(features, "gpu")
	}
	if r.IntN(5) == 0 {
		preC["ports"] = hostPort()
		features = append(features, "hostport")
	}
	affinity := obj{}
	if r.IntN(5) == 0 {
		key := hostname
		if r.IntN(3) == 0 {
			key = zone
		}
		affinity["podAntiAffinity"] = required(apps[r.IntN(len(apps))], key)
		features = append(features, "anti-affinity")
	}
	if r.IntN(8) == 0 {
		affinity["podAffinity"] = required(apps[r.IntN(len(apps))], zone)
		features = append(features, "affinity")
	}
	if len(affinity) > 0 {
		preSpec["affinity"] = affinity
	}
	if r.IntN(5) == 0 {
		key := hostname
		if r.IntN(2) == 0 {
			key = zone
		}
		c := obj{"maxSkew": 1 + r.IntN(2), "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": matchApp(pre.app)}
		if r.IntN(3) == 0 {
			md := 2 + r.IntN(3)
			if minor >= minDomains {
				c["minDomains"] = md
			}
		}
		preSpec["topologySpreadConstraints"] = []obj{c}
		features = append(features, "spread")
	}
	if r.IntN(5) == 0 {
		preSpec["nodeSelector"] = obj{"disk": "ssd"}
		features = append(features, "selector")
	}
	if r.IntN(6) == 0 {
		preSpec["tolerations"] = []obj{{"key": dedicated, "operator": "Equal", "value": "infra", "effect": "NoSchedule"}}
		features = append(features, "toleration")
	}
	if r.IntN(12) == 0 {
		preSpec["preemptionPolicy"] = "Never"
		features = append(features, "never")
	}
	if r.IntN(10) == 0 {
		// Nominated before, with a victim still terminating there.
		n := nodes[r.IntN(len(nodes))].name
		pre.nominated = n
		for _, p := range pods {
			if p.node == n && p.prio < prePrio && r.IntN(2) == 0 {
				// Deleted by that preemption (with the scheduler's
				// DisruptionTarget condition) or by someone else.
				p.deleting, p.preempted = true, r.IntN(2) == 0
				break
			}
		}
		features = append(features, "renominated")
	}
	preObj["status"] = obj{"phase": "Pending"}
	if pre.nominated != "" {
		preObj["status"].(obj)["nominatedNodeName"] = pre.nominated
	}
	sc := &Scenario{Seed: seed, Preemptor: mustJSON(preObj), PDBs: pdbs,
		What: fmt.Sprintf("%d nodes, %d pods, priority %d %v", nNodes, len(pods), prePrio, features)}
	for _, n := range nodes {
		sc.Nodes = append(sc.Nodes, n.object())
	}
	for _, p := range pods {
		sc.Pods = append(sc.Pods, mustJSON(p.object()))
	}
	return sc
}

type obj = map[string]any

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func matchApp(app string) obj { return obj{"matchLabels": obj{"app": app}} }

func required(app, key string) obj {
	return obj{"requiredDuringSchedulingIgnoredDuringExecution": []obj{{"labelSelector": matchApp(app), "topologyKey": key}}}
}

func hostPort() []obj {
	return []obj{{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}}
}

func (n *node) object() json.RawMessage {
	labels := obj{hostname: n.name, zone: n.zone}
	if n.ssd {
		labels["disk"] = "ssd"
	}
	alloc := obj{"cpu": fmt.Sprintf("%dm", n.cpuMilli), "memory": fmt.Sprint(n.memBytes), "pods": fmt.Sprint(n.maxPods)}
	if n.gpus > 0 {
		alloc[gpu] = fmt.Sprint(n.gpus)
	}
	spec := obj{}
	if n.tainted {
		spec["taints"] = []obj{{"key": dedicated, "value": "infra", "effect": "NoSchedule"}}
	}
	if n.unsched {
		spec["unschedulable"] = true
	}
	return mustJSON(obj{"metadata": obj{"name": n.name, "labels": labels}, "spec": spec,
		"status": obj{"allocatable": alloc, "capacity": alloc}})
}

func (p *pod) resources() obj {
	req := obj{"cpu": fmt.Sprintf("%dm", p.cpuMilli), "memory": fmt.Sprint(p.memBytes)}
	res := obj{"requests": req}
	if p.gpu {
		req[gpu] = "1"
		res["limits"] = obj{gpu: "1"}
	}
	return res
}

func (p *pod) object() obj {
	c := obj{"name": "c", "image": "x", "resources": p.resources()}
	if p.hostPort {
		c["ports"] = hostPort()
	}
	spec := obj{"priority": p.prio, "schedulerName": schedName, "containers": []obj{c}}
	if p.node != "" {
		spec["nodeName"] = p.node
	}
	if p.anti != nil {
		spec["affinity"] = obj{"podAntiAffinity": required(p.anti.app, p.anti.key)}
	}
	if p.overhead {
		spec["overhead"] = obj{"cpu": "250m"}
	}
	if p.sidecar {
		spec["initContainers"] = []obj{{"name": "sidecar", "image": "x", "restartPolicy": "Always",
			"resources": obj{"requests": obj{"cpu": "200m"}}}}
	}
	if p.tolerateAll {
		spec["tolerations"] = []obj{{"key": dedicated, "operator": "Exists"}}
	}
	meta := obj{"name": p.name, "namespace": namespace, "uid": "uid-" + p.name, "labels": obj{"app": p.app},
		"creationTimestamp": T0.Format(time.RFC3339)}
	status := obj{"phase": p.phase}
	if p.startMin >= 0 {
		status["startTime"] = T0.Add(time.Duration(p.startMin) * time.Minute).Format(time.RFC3339)
	}
	if p.nominated != "" {
		status["nominatedNodeName"] = p.nominated
	}
	if p.deleting {
		meta["deletionTimestamp"] = T0.Add(time.Hour).Format(time.RFC3339)
	}
	if p.preempted {
		status["conditions"] = []obj{{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}}
	}
	return obj{"metadata": meta, "spec": spec, "status": status}
}

// Strict decodes one object of a scenario into a release's type; an
// unknown field (one that release lacks) is an error.
func Strict(raw json.RawMessage, into any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return fmt.Errorf("%v in %s", err, raw)
	}
	return nil
}

// Decode decodes each object strictly into a new T (see Strict).
func Decode[T any](raws []json.RawMessage) ([]*T, error) {
	out := make([]*T, 0, len(raws))
	for _, raw := range raws {
		v := new(T)
		if err := Strict(raw, v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Visible are the pods kube-scheduler's informer lists (it selects
// status.phase!=Succeeded,Failed), the preemptor last, and how many of
// them are bound and pending.
func (s *Scenario) Visible() (pods []json.RawMessage, bound, pending int) {
	for _, raw := range append(s.Pods[:len(s.Pods):len(s.Pods)], s.Preemptor) {
		var p struct {
			Spec   struct{ NodeName string }
			Status struct{ Phase string }
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			panic(err)
		}
		switch {
		case p.Status.Phase == "Succeeded" || p.Status.Phase == "Failed":
			continue
		case p.Spec.NodeName != "":
			bound++
		default:
			pending++
		}
		pods = append(pods, raw)
	}
	return pods, bound, pending
}
