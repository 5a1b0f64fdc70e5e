package scheduling

import (
	"math"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// resources is the scheduler's framework.Resource: what a pod requests or
// a node has, in the units the Fit plugin compares.
type resources struct {
	milliCPU, memory, ephemeral int64
	scalar                      map[corev1.ResourceName]int64
}

func resourcesOf(list corev1.ResourceList) resources {
	var r resources
	for name, q := range list {
		switch name {
		case corev1.ResourceCPU:
			r.milliCPU = q.MilliValue()
		case corev1.ResourceMemory:
			r.memory = q.Value()
		case corev1.ResourceEphemeralStorage:
			r.ephemeral = q.Value()
		default:
			if isScalarResource(name) {
				if r.scalar == nil {
					r.scalar = map[corev1.ResourceName]int64{}
				}
				r.scalar[name] = q.Value()
			}
		}
	}
	return r
}

// isScalarResource is v1helper.IsScalarResourceName: extended resources,
// hugepages and attachable volumes; other native names are not counted.
func isScalarResource(name corev1.ResourceName) bool {
	s := string(name)
	if strings.HasPrefix(s, corev1.ResourceHugePagesPrefix) || strings.HasPrefix(s, corev1.ResourceAttachableVolumesPrefix) {
		return true
	}
	native := !strings.Contains(s, "/") || strings.Contains(s, corev1.ResourceDefaultNamespacePrefix)
	return !native && !strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix)
}

func (r *resources) add(o resources, sign int64) {
	r.milliCPU += sign * o.milliCPU
	r.memory += sign * o.memory
	r.ephemeral += sign * o.ephemeral
	for n, v := range o.scalar {
		if r.scalar == nil {
			r.scalar = map[corev1.ResourceName]int64{}
		}
		r.scalar[n] += sign * v
	}
}

type hostPort struct {
	ip, protocol string
	port         int32
}

// hostPortsOf is util.GetHostPorts: containers and sidecars (restartable
// init containers), with the API defaults for an empty IP and protocol.
func hostPortsOf(pod *corev1.Pod) []hostPort {
	var out []hostPort
	add := func(c corev1.Container) {
		for _, p := range c.Ports {
			if p.HostPort <= 0 {
				continue
			}
			hp := hostPort{ip: p.HostIP, protocol: string(p.Protocol), port: p.HostPort}
			if hp.ip == "" {
				hp.ip = "0.0.0.0"
			}
			if hp.protocol == "" {
				hp.protocol = string(corev1.ProtocolTCP)
			}
			out = append(out, hp)
		}
	}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add(c)
		}
	}
	for _, c := range pod.Spec.Containers {
		add(c)
	}
	return out
}

// term is fwk.AffinityTerm: a required (anti-)affinity term with its
// namespaces resolved.
type term struct {
	selector      labels.Selector
	namespaces    map[string]bool
	nsSelector    labels.Selector // matched against the other pod's namespace labels
	topologyKey   string
	needsNsLabels bool
}

func (t *term) matches(pod *corev1.Pod, nsLabels labels.Set) bool {
	if t.namespaces[pod.Namespace] || t.nsSelector.Matches(nsLabels) {
		return t.selector.Matches(labels.Set(pod.Labels))
	}
	return false
}

func termsOf(pod *corev1.Pod, in []corev1.PodAffinityTerm) ([]term, error) {
	out := make([]term, 0, len(in))
	for _, t := range in {
		sel := labels.Nothing()
		if t.LabelSelector != nil {
			s, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
			if err != nil {
				return nil, err
			}
			sel = s
		}
		ns := map[string]bool{}
		for _, n := range t.Namespaces {
			ns[n] = true
		}
		nsSel := labels.Nothing()
		needs := false
		if t.NamespaceSelector != nil {
			s, err := metav1.LabelSelectorAsSelector(t.NamespaceSelector)
			if err != nil {
				return nil, err
			}
			nsSel = s
			needs = !s.Empty()
		} else if len(ns) == 0 {
			ns[pod.Namespace] = true
		}
		out = append(out, term{selector: sel, namespaces: ns, nsSelector: nsSel, topologyKey: t.TopologyKey, needsNsLabels: needs})
	}
	return out, nil
}

func requiredAffinity(pod *corev1.Pod) []corev1.PodAffinityTerm {
	if a := pod.Spec.Affinity; a != nil && a.PodAffinity != nil {
		return a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

func requiredAntiAffinity(pod *corev1.Pod) []corev1.PodAffinityTerm {
	if a := pod.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
		return a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

// PodInfo is one pod as the scheduler's cache holds it; never changed
// once made, so caches and views share it.
type PodInfo struct {
	Pod       *corev1.Pod
	Priority  int32
	req       resources
	non0      nonZero // the requests NodeResourcesFit's score counts
	ports     []hostPort
	antiTerms []term
}

// StartTime is util.GetPodStartTime: a pod without status.startTime counts
// as starting now, later than any recorded start.
func (p *PodInfo) StartTime() (time.Time, bool) {
	if p.Pod.Status.StartTime == nil {
		return time.Time{}, false
	}
	return p.Pod.Status.StartTime.Time, true
}

// newPodInfo reads a pod; scratch (may be nil) is reused for the request
// sum, which resourcesOf copies out at once.
func newPodInfo(pod *corev1.Pod, r rules.SchedulerRules, useStatus bool, scratch corev1.ResourceList) (*PodInfo, error) {
	req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{
		Reuse:                 scratch,
		UseStatusResources:    useStatus && r.UseStatusResources && statusResources(pod),
		SkipPodLevelResources: !r.PodLevelResources,
	})
	anti, err := termsOf(pod, requiredAntiAffinity(pod))
	if err != nil {
		return nil, err
	}
	pi := &PodInfo{Pod: pod, Priority: corev1helpers.PodPriority(pod), req: resourcesOf(req), ports: hostPortsOf(pod), antiTerms: anti}
	pi.non0 = nonZeroOf(pod, r, useStatus, pi.req)
	return pi, nil
}

// nonZero is a pod's CPU and memory as the scheduler's scores count them:
// 100m and 200Mi for a container that requests none (PodInfo.Non0CPU).
type nonZero struct{ milliCPU, memory int64 }

const (
	defaultMilliCPURequest = 100
	defaultMemoryRequest   = 200 * 1024 * 1024
)

// nonZeroOf is PodInfo.CalculateResource's Non0CPU/Non0Mem: with
// pod-level requests, the defaults fill only a resource neither level sets.
func nonZeroOf(pod *corev1.Pod, r rules.SchedulerRules, useStatus bool, req resources) nonZero {
	defaults := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(defaultMilliCPURequest, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(defaultMemoryRequest, resource.DecimalSI),
	}
	if r.PodLevelResources && resourcehelper.IsPodLevelRequestsSet(pod) {
		if req.milliCPU != 0 || hasRequest(pod, corev1.ResourceCPU) {
			delete(defaults, corev1.ResourceCPU)
		}
		if req.memory != 0 || hasRequest(pod, corev1.ResourceMemory) {
			delete(defaults, corev1.ResourceMemory)
		}
		if len(defaults) == 0 {
			return nonZero{req.milliCPU, req.memory}
		}
	} else if !missesRequest(pod) {
		return nonZero{req.milliCPU, req.memory}
	}
	out := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{
		UseStatusResources: useStatus && r.UseStatusResources, SkipPodLevelResources: !r.PodLevelResources,
		NonMissingContainerRequests: defaults,
	})
	return nonZero{out.Cpu().MilliValue(), out.Memory().Value()}
}

// missesRequest: some container leaves CPU or memory unrequested.
func missesRequest(pod *corev1.Pod) bool {
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			_, cpu := c.Resources.Requests[corev1.ResourceCPU]
			_, mem := c.Resources.Requests[corev1.ResourceMemory]
			if !cpu || !mem {
				return true
			}
		}
	}
	return false
}

// hasRequest: the pod's requests (either level) name the resource.
func hasRequest(pod *corev1.Pod, name corev1.ResourceName) bool {
	if pod.Spec.Resources != nil {
		if _, ok := pod.Spec.Resources.Requests[name]; ok {
			return true
		}
	}
	return false
}

// statusResources: the pod's status holds resources (its containers'
// allocated or actual ones, the pod's) or a resize found infeasible.
// Without, PodRequests's status lists fall back to the spec, so reading the
// status gives the spec's sum at a third of the work (150,000 pods).
func statusResources(pod *corev1.Pod) bool {
	st := pod.Status
	if st.AllocatedResources != nil || st.Resources != nil || resourcehelper.IsPodResizeInfeasible(pod) {
		return true
	}
	for _, list := range [][]corev1.ContainerStatus{st.ContainerStatuses, st.InitContainerStatuses} {
		for _, cs := range list {
			if cs.AllocatedResources != nil || cs.Resources != nil {
				return true
			}
		}
	}
	return false
}

// NodeState is a NodeInfo: the node, its bound pods and what they use.
type NodeState struct {
	Node        *corev1.Node
	allocatable resources
	allowedPods int64
	Pods        []*PodInfo
	Nominated   []*PodInfo // nominated pods of at least the preemptor's priority
	requested   resources
	non0        nonZero
	podCount    int
	ports       map[hostPort]bool
	images      map[string]int64 // status.images by name, read when scored
	// static is the first failure of the filters that do not depend on the
	// node's pods (node name, unschedulable, taints, node affinity): all
	// UnschedulableAndUnresolvable.
	static string
	// gen counts the changes of the node's pods (Alike's verdicts).
	gen uint64
}

func newNodeState(n *corev1.Node) *NodeState {
	ns := &NodeState{Node: n, allocatable: resourcesOf(n.Status.Allocatable), ports: map[hostPort]bool{}}
	if q, ok := n.Status.Allocatable[corev1.ResourcePods]; ok {
		ns.allowedPods = q.Value()
	}
	return ns
}

func (n *NodeState) addUsage(p *PodInfo, sign int) {
	n.gen++
	n.requested.add(p.req, int64(sign))
	n.non0.milliCPU += int64(sign) * p.non0.milliCPU
	n.non0.memory += int64(sign) * p.non0.memory
	n.podCount += sign
	// NodeInfo.UsedPorts is a set, not a count: removing one pod frees a
	// port that another pod on the node still declares.
	for _, hp := range p.ports {
		if sign > 0 {
			n.ports[hp] = true
		} else {
			delete(n.ports, hp)
		}
	}
}

// portConflict is HostPortInfo.CheckConflict.
func (n *NodeState) portConflict(hp hostPort) bool {
	if len(n.ports) == 0 {
		return false
	}
	if hp.ip == "0.0.0.0" {
		for used := range n.ports {
			if used.protocol == hp.protocol && used.port == hp.port {
				return true
			}
		}
		return false
	}
	return n.ports[hp] || n.ports[hostPort{ip: "0.0.0.0", protocol: hp.protocol, port: hp.port}]
}

// staticFailure evaluates NodeName, NodeUnschedulable, TaintToleration
// and NodeAffinity in the default profile's order.
func staticFailure(pod *corev1.Pod, node *corev1.Node, aff nodeaffinity.RequiredNodeAffinity) string {
	logger := klog.Background()
	if pod.Spec.NodeName != "" && pod.Spec.NodeName != node.Name {
		return "node(s) didn't match the requested node name"
	}
	if node.Spec.Unschedulable {
		t := corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}
		if !corev1helpers.TolerationsTolerateTaint(logger, pod.Spec.Tolerations, &t, false) {
			return "node(s) were unschedulable"
		}
	}
	if taint, bad := corev1helpers.FindMatchingUntoleratedTaint(logger, node.Spec.Taints, pod.Spec.Tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, false); bad {
		return "node(s) had untolerated taint {" + taint.Key + ": " + taint.Value + "}"
	}
	if ok, _ := aff.Match(node); !ok {
		return "node(s) didn't match Pod's node affinity/selector"
	}
	return ""
}

// pair is a topology key and value.
type pair struct{ key, value string }

type counts map[pair]int64

func (c counts) update(node *corev1.Node, key string, delta int64) {
	if v, ok := node.Labels[key]; ok {
		p := pair{key, v}
		c[p] += delta
		if c[p] == 0 {
			delete(c, p)
		}
	}
}

// spreadConstraint is one DoNotSchedule topology spread constraint with the
// PreFilter state the plugin keeps for it.
type spreadConstraint struct {
	maxSkew     int32
	minDomains  int32
	topologyKey string
	selector    labels.Selector
	honorAff    bool
	honorTaints bool
	matchNum    map[string]int
	paths       criticalPaths
}

// criticalPaths keeps the two smallest domains exactly as the plugin does
// (its answer after updates is what the plugin compares, not a true min).
type criticalPaths [2]struct {
	value string
	num   int
}

func newCriticalPaths() criticalPaths {
	return criticalPaths{{num: math.MaxInt32}, {num: math.MaxInt32}}
}

func (p *criticalPaths) update(value string, num int) {
	i := -1
	switch value {
	case p[0].value:
		i = 0
	case p[1].value:
		i = 1
	}
	if i >= 0 {
		p[i].num = num
		if p[0].num > p[1].num {
			p[0], p[1] = p[1], p[0]
		}
		return
	}
	if num < p[0].num {
		p[1] = p[0]
		p[0].value, p[0].num = value, num
	} else if num < p[1].num {
		p[1].value, p[1].num = value, num
	}
}
