package scheduling

import (
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// systemDefaultConstraints is PodTopologySpread's default (defaultingType
// System) for a pod without constraints of its own, in its order.
var systemDefaultConstraints = []corev1.TopologySpreadConstraint{
	{TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway, MaxSkew: 3},
	{TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.ScheduleAnyway, MaxSkew: 5},
}

// softSpread is the PodTopologySpread PreScore state.
type softSpread struct {
	cs          []*spreadConstraint
	requireAll  bool // every key on a node, else the node scores 0
	counts      []map[string]int
	weights     []float64
	ignored     []bool // by feasible node
	podLabels   labels.Set
	defaultsSel bool // the constraints are the system defaults
}

// spreadScores is PodTopologySpread's score: fewer matching pods in the
// node's domains is better, normalised over the feasible nodes.
func (c *Cluster) spreadScores(nodes []*NodeState, ch *Choice) []int64 {
	out := make([]int64, len(nodes))
	ss, err := c.softSpreadState(nodes, ch)
	if err != nil {
		ch.Unmodelled = appendOnce(ch.Unmodelled, err.Error())
		return out
	}
	if ss == nil {
		return out
	}
	c.countSpread(ss, ch)
	for i, n := range nodes {
		if ss.ignored[i] {
			continue
		}
		var score float64
		for k, sc := range ss.cs {
			v, ok := n.Node.Labels[sc.topologyKey]
			if !ok {
				continue
			}
			cnt := ss.counts[k][v]
			if sc.topologyKey == corev1.LabelHostname {
				cnt = c.countOn(ss, sc, n, ch)
			}
			score += float64(cnt)*ss.weights[k] + float64(sc.maxSkew-1)
		}
		out[i] = int64(math.Round(score))
	}
	return normalizeSpread(out, ss.ignored)
}

// normalizeSpread is PodTopologySpread.NormalizeScore.
func normalizeSpread(scores []int64, ignored []bool) []int64 {
	lo, hi := int64(math.MaxInt64), int64(0)
	for i, s := range scores {
		if !ignored[i] {
			lo, hi = min(lo, s), max(hi, s)
		}
	}
	for i, s := range scores {
		switch {
		case ignored[i]:
			scores[i] = 0
		case hi == 0:
			scores[i] = maxNodeScore
		default:
			scores[i] = maxNodeScore * (hi + lo - s) / hi
		}
	}
	return scores
}

// softSpreadState is initPreScoreState: the pod's ScheduleAnyway
// constraints, or the system defaults with its controller's selector.
func (c *Cluster) softSpreadState(nodes []*NodeState, ch *Choice) (*softSpread, error) {
	pod := c.Pre.Pod
	ss := &softSpread{requireAll: len(pod.Spec.TopologySpreadConstraints) > 0, podLabels: c.preLabels}
	if ss.requireAll {
		for _, tsc := range pod.Spec.TopologySpreadConstraints {
			if tsc.WhenUnsatisfiable != corev1.ScheduleAnyway {
				continue
			}
			sc, err := c.parseSpread(tsc, pod)
			if err != nil {
				return nil, err
			}
			ss.cs = append(ss.cs, sc)
		}
	} else if sel := c.defaultSelector(ch); sel != nil {
		ss.defaultsSel = true
		for _, tsc := range systemDefaultConstraints {
			sc, _ := c.parseSpread(tsc, pod)
			sc.selector = sel
			ss.cs = append(ss.cs, sc)
		}
	}
	if len(ss.cs) == 0 {
		return nil, nil
	}
	c.spreadDomains(ss, nodes)
	return ss, nil
}

// spreadDomains: the feasible nodes' domains (a node without every key
// is ignored when the constraints are the pod's own) and their weights.
func (c *Cluster) spreadDomains(ss *softSpread, nodes []*NodeState) {
	ss.ignored = make([]bool, len(nodes))
	ss.counts = make([]map[string]int, len(ss.cs))
	ss.weights = make([]float64, len(ss.cs))
	size := make([]int, len(ss.cs))
	for k := range ss.cs {
		ss.counts[k] = map[string]int{}
	}
	kept := 0
	for i, n := range nodes {
		if ss.requireAll && !hasSpreadKeys(n.Node, ss.cs) {
			ss.ignored[i] = true
			continue
		}
		kept++
		for k, sc := range ss.cs {
			if sc.topologyKey == corev1.LabelHostname {
				continue
			}
			v := n.Node.Labels[sc.topologyKey]
			if _, ok := ss.counts[k][v]; !ok {
				ss.counts[k][v] = 0
				size[k]++
			}
		}
	}
	for k, sc := range ss.cs {
		if sc.topologyKey == corev1.LabelHostname {
			size[k] = kept
		}
		ss.weights[k] = math.Log(float64(size[k] + 2))
	}
}

// countSpread is PreScore's count over every node (hostname is counted
// per node in Score).
func (c *Cluster) countSpread(ss *softSpread, ch *Choice) {
	for _, n := range c.Nodes {
		if !c.Rules.NodeInclusionPolicy {
			if ok, _ := c.preAff.Match(n.Node); !ok {
				continue
			}
		}
		if ss.requireAll && !hasSpreadKeys(n.Node, ss.cs) {
			continue
		}
		for k, sc := range ss.cs {
			if !c.spreadIncludes(sc, n.Node) {
				continue
			}
			v := n.Node.Labels[sc.topologyKey]
			if _, ok := ss.counts[k][v]; !ok || sc.topologyKey == corev1.LabelHostname {
				continue
			}
			ss.counts[k][v] += c.countOn(ss, sc, n, ch)
		}
	}
}

// countOn is countPodsMatchSelector on one node: the pod's namespace,
// terminating pods left out. With the system defaults the selector lacks
// the Services that select the pod (not read): they can only narrow it,
// which changes nothing when every counted pod carries the pod's labels.
func (c *Cluster) countOn(ss *softSpread, sc *spreadConstraint, n *NodeState, ch *Choice) int {
	if sc.selector.Empty() {
		return 0
	}
	cnt := 0
	for _, p := range n.Pods {
		if p.Pod.DeletionTimestamp != nil || p.Pod.Namespace != c.Pre.Pod.Namespace || !sc.selector.Matches(labels.Set(p.Pod.Labels)) {
			continue
		}
		cnt++
		if ss.defaultsSel && !labelsCarry(p.Pod.Labels, ss.podLabels) {
			ch.Unmodelled = appendOnce(ch.Unmodelled, fmt.Sprintf("the default topology spreading counts pod %s/%s, whose labels differ from the new pod's: "+
				"a Service selecting the new pod would leave it out, and Services are not read", p.Pod.Namespace, p.Pod.Name))
		}
	}
	return cnt
}

func hasSpreadKeys(n *corev1.Node, cs []*spreadConstraint) bool {
	for _, sc := range cs {
		if _, ok := n.Labels[sc.topologyKey]; !ok {
			return false
		}
	}
	return true
}

// defaultSelector is helper.DefaultSelector without Services: the
// selector of the pod's ReplicaSet, StatefulSet or ReplicationController.
// nil when the defaults do not apply (or cannot be known: noted).
func (c *Cluster) defaultSelector(ch *Choice) labels.Selector {
	owner := metav1.GetControllerOfNoCopy(c.Pre.Pod)
	switch {
	case owner == nil || !controllerWithSelector(owner):
		ch.Unmodelled = appendOnce(ch.Unmodelled, "the pod has no ReplicaSet or StatefulSet: the default topology spreading "+
			"applies only if a Service selects it, and Services are not read")
		return nil
	case c.owner == nil:
		ch.Unmodelled = appendOnce(ch.Unmodelled, fmt.Sprintf("the default topology spreading needs the selector of %s %s, which was not read", owner.Kind, owner.Name))
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(c.owner)
	if err != nil || sel.Empty() {
		return nil // DefaultSelector keeps the Services' part only
	}
	return sel
}

func controllerWithSelector(o *metav1.OwnerReference) bool {
	switch o.Kind {
	case "ReplicaSet", "StatefulSet":
		return o.APIVersion == "apps/v1"
	case "ReplicationController":
		return o.APIVersion == "v1"
	}
	return false
}

// parseSpread reads one constraint (selector with matchLabelKeys merged,
// node inclusion policies).
func (c *Cluster) parseSpread(tsc corev1.TopologySpreadConstraint, pod *corev1.Pod) (*spreadConstraint, error) {
	ls := tsc.LabelSelector
	if c.Rules.MatchLabelKeys && len(tsc.MatchLabelKeys) > 0 && ls != nil {
		ls = ls.DeepCopy()
		for _, k := range tsc.MatchLabelKeys {
			if v, ok := pod.Labels[k]; ok {
				ls.MatchExpressions = append(ls.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpIn, Values: []string{v}})
			}
		}
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, fmt.Errorf("topology spread constraint: %w", err)
	}
	sc := &spreadConstraint{maxSkew: tsc.MaxSkew, minDomains: 1, topologyKey: tsc.TopologyKey, selector: sel,
		honorAff: true, matchNum: map[string]int{}, paths: newCriticalPaths()}
	if c.Rules.MinDomains && tsc.MinDomains != nil {
		sc.minDomains = *tsc.MinDomains
	}
	if c.Rules.NodeInclusionPolicy {
		sc.honorAff = tsc.NodeAffinityPolicy == nil || *tsc.NodeAffinityPolicy == corev1.NodeInclusionPolicyHonor
		sc.honorTaints = tsc.NodeTaintsPolicy != nil && *tsc.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor
	}
	return sc, nil
}
