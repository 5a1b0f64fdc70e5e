package scheduling

import (
	"fmt"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// maxNodeScore is framework.MaxNodeScore.
const maxNodeScore = 100

// Choice is where the scheduler binds a pod among the nodes that pass
// the filters: the default profile's Score phase (weights from
// default_plugins.go) and its pick among the best.
type Choice struct {
	// Node is the scheduler's pick when it is determined; "" otherwise.
	Node string
	// Top are the nodes it picks among, in node order: the feasible nodes
	// sharing the highest total score; every feasible node when Sampled;
	// Node alone when determined.
	Top []string
	// Chance of each Top node when the tie rule justifies one (selectHost's
	// uniform pick, before 1.35); 0 when the pick follows an evaluation
	// order the plugin cannot see.
	Chance float64
	// Sampled: more nodes fit than the scheduler scores
	// (numFeasibleNodesToFind); it scores those it finds first from a
	// rotating start index, so any feasible node may win.
	Sampled bool
	// Unmodelled names the inputs the scores need and the snapshot lacks:
	// Top may be wrong, and the answer is uncertain.
	Unmodelled []string
	// Scores are the total scores of the feasible nodes, in Feasible's
	// order (nil when not scored).
	Scores []int64
}

// Determined: the pod's node follows from the input.
func (ch Choice) Determined() bool { return ch.Node != "" && len(ch.Unmodelled) == 0 }

// ScoreInput is what the scores need beyond the filters' input.
type ScoreInput struct {
	// OwnerSelector is the selector of the pod's controller (ReplicaSet,
	// StatefulSet, ReplicationController): the system default topology
	// spreading counts the pods it selects. nil: not known.
	OwnerSelector *metav1.LabelSelector
}

// scorePlugin is one Score plugin with its weights in the default
// profile: before 1.23 (config v1beta1/v1beta2) and since (v1beta3, v1).
type scorePlugin struct {
	before, since int64
	score         func(c *Cluster, nodes []*NodeState, ch *Choice) []int64
}

var scorePlugins = []scorePlugin{
	{1, 3, (*Cluster).taintScores},
	{1, 2, (*Cluster).nodeAffinityScores},
	{1, 1, (*Cluster).leastAllocatedScores},
	{2, 2, (*Cluster).spreadScores},
	{1, 2, (*Cluster).interPodAffinityScores},
	{1, 1, (*Cluster).balancedScores},
	{1, 1, (*Cluster).imageScores},
}

// preferAvoidPods is the node annotation NodePreferAvoidPods scored (1.21).
const preferAvoidPods = "scheduler.alpha.kubernetes.io/preferAvoidPods"

// Choose is where the scheduler binds the cluster's pod, given the
// filters' Placement.
func (c *Cluster) Choose(pl Placement, in ScoreInput) Choice {
	ch := Choice{}
	switch n := len(pl.Feasible); {
	case n == 0:
		return ch
	case n == 1: // schedulePod binds a lone feasible node unscored
		ch.Node, ch.Top = pl.Feasible[0], pl.Feasible
		return ch
	case n > numFeasibleNodesToFind(len(c.Nodes)):
		ch.Top, ch.Sampled = pl.Feasible, true
		return ch
	}
	// What the filters do not model (volumes, claims) has scores too.
	ch.Unmodelled = append(ch.Unmodelled, pl.Unmodelled...)
	c.owner = in.OwnerSelector
	nodes := make([]*NodeState, len(pl.Feasible))
	for i, name := range pl.Feasible {
		nodes[i] = c.ByName[name]
	}
	ch.Scores = make([]int64, len(nodes))
	for _, p := range scorePlugins {
		w := p.before
		if c.Rules.ScoreWeightsV1beta3 {
			w = p.since
		}
		s := p.score(c, nodes, &ch)
		for i := range s {
			ch.Scores[i] += w * s[i]
		}
	}
	for _, n := range nodes {
		if _, ok := n.Node.Annotations[preferAvoidPods]; ok && !c.Rules.NoPreferAvoidPods {
			ch.Unmodelled = appendOnce(ch.Unmodelled, "node "+n.Node.Name+" has the preferAvoidPods annotation, which 1.21's NodePreferAvoidPods score reads: not modelled")
		}
	}
	best := slices.Max(ch.Scores)
	for i, s := range ch.Scores {
		if s == best {
			ch.Top = append(ch.Top, pl.Feasible[i])
		}
	}
	if len(ch.Top) == 1 {
		ch.Node = ch.Top[0]
	} else if !c.Rules.ScoreTiesInEvaluationOrder {
		ch.Chance = 1 / float64(len(ch.Top))
	}
	return ch
}

// numFeasibleNodesToFind is the scheduler's, with the default
// percentageOfNodesToScore (0: adaptive).
func numFeasibleNodesToFind(all int) int {
	const minFeasible, minPercentage = 100, 5
	if all < minFeasible {
		return all
	}
	pct := max(50-all/125, minPercentage)
	return max(all*pct/100, minFeasible)
}

// defaultNormalize is helper.DefaultNormalizeScore.
func defaultNormalize(scores []int64, reverse bool) []int64 {
	top := slices.Max(scores)
	for i := range scores {
		switch {
		case top == 0 && reverse:
			scores[i] = maxNodeScore
		case top == 0:
		case reverse:
			scores[i] = maxNodeScore - maxNodeScore*scores[i]/top
		default:
			scores[i] = maxNodeScore * scores[i] / top
		}
	}
	return scores
}

// taintScores is TaintToleration: the PreferNoSchedule taints the pod
// does not tolerate, fewer is better.
func (c *Cluster) taintScores(nodes []*NodeState, _ *Choice) []int64 {
	var tols []corev1.Toleration
	for _, t := range c.Pre.Pod.Spec.Tolerations {
		if t.Effect == "" || t.Effect == corev1.TaintEffectPreferNoSchedule {
			tols = append(tols, t)
		}
	}
	out := make([]int64, len(nodes))
	for i, n := range nodes {
		for _, t := range n.Node.Spec.Taints {
			if t.Effect == corev1.TaintEffectPreferNoSchedule && !corev1helpers.TolerationsTolerateTaint(klog.Background(), tols, &t, false) {
				out[i]++
			}
		}
	}
	return defaultNormalize(out, true)
}

// nodeAffinityScores is NodeAffinity: the weights of the preferred terms
// the node matches.
func (c *Cluster) nodeAffinityScores(nodes []*NodeState, ch *Choice) []int64 {
	out := make([]int64, len(nodes))
	a := c.Pre.Pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
		return out
	}
	terms, err := nodeaffinity.NewPreferredSchedulingTerms(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	if err != nil {
		ch.Unmodelled = appendOnce(ch.Unmodelled, fmt.Sprintf("preferred node affinity the scheduler rejects: %v", err))
		return out
	}
	for i, n := range nodes {
		out[i] = terms.Score(n.Node)
	}
	return defaultNormalize(out, false)
}

// leastAllocatedScores is NodeResourcesFit's LeastAllocated strategy over
// CPU and memory (weight 1 each), with the non-zero requests.
func (c *Cluster) leastAllocatedScores(nodes []*NodeState, _ *Choice) []int64 {
	out := make([]int64, len(nodes))
	for i, n := range nodes {
		var sum, weights int64
		for _, r := range [][2]int64{
			{n.allocatable.milliCPU, n.non0.milliCPU + c.Pre.non0.milliCPU},
			{n.allocatable.memory, n.non0.memory + c.Pre.non0.memory},
		} {
			if r[0] == 0 {
				continue
			}
			if r[1] <= r[0] {
				sum += (r[0] - r[1]) * maxNodeScore / r[0]
			}
			weights++
		}
		if weights > 0 {
			out[i] = sum / weights
		}
	}
	return out
}

// balancedScores is NodeResourcesBalancedAllocation over CPU and memory,
// with the requests as they are.
func (c *Cluster) balancedScores(nodes []*NodeState, _ *Choice) []int64 {
	out := make([]int64, len(nodes))
	req := c.Pre.req
	if c.Rules.BalancedSkipsBestEffort && req.milliCPU == 0 && req.memory == 0 {
		return out
	}
	for i, n := range nodes {
		alloc := []int64{n.allocatable.milliCPU, n.allocatable.memory}
		without := []int64{n.requested.milliCPU, n.requested.memory}
		with := []int64{without[0] + req.milliCPU, without[1] + req.memory}
		if c.Rules.BalancedAllocationDelta {
			out[i] = maxNodeScore/2 + (maxNodeScore/2+balance(with, alloc)-balance(without, alloc))/2
		} else {
			out[i] = balance(with, alloc)
		}
	}
	return out
}

// balance is balancedResourceScore: 100·(1 - the spread of the used
// fractions).
func balance(requested, alloc []int64) int64 {
	var fractions []float64
	for i := range requested {
		if alloc[i] == 0 {
			continue
		}
		fractions = append(fractions, min(float64(requested[i])/float64(alloc[i]), 1))
	}
	std := 0.0
	if len(fractions) == 2 {
		std = math.Abs((fractions[0] - fractions[1]) / 2)
	}
	return int64((1 - std) * float64(maxNodeScore))
}

// imageScores is ImageLocality: the pod's images already on the node,
// scaled by how many nodes have them (node.status.images).
func (c *Cluster) imageScores(nodes []*NodeState, _ *Choice) []int64 {
	const mb = 1024 * 1024
	const minThreshold, maxContainerThreshold = 23 * mb, 1000 * mb
	spec := c.Pre.Pod.Spec
	var images []string
	for _, ct := range slices.Concat(spec.InitContainers, spec.Containers) {
		images = append(images, normalizedImageName(ct.Image))
	}
	for _, v := range spec.Volumes {
		if v.Image != nil {
			images = append(images, normalizedImageName(v.Image.Reference))
		}
	}
	spread := c.imageSpread()
	out := make([]int64, len(nodes))
	maxThreshold := maxContainerThreshold * int64(len(images))
	for i, n := range nodes {
		var sum int64
		for _, img := range images {
			if size, ok := n.imageSizes()[img]; ok {
				sum += int64(float64(size) * float64(spread[img]) / float64(len(c.Nodes)))
			}
		}
		sum = min(max(sum, minThreshold), maxThreshold)
		if maxThreshold > minThreshold {
			out[i] = maxNodeScore * (sum - minThreshold) / (maxThreshold - minThreshold)
		}
	}
	return out
}

// normalizedImageName adds the tag ":latest" to an image without one.
func normalizedImageName(name string) string {
	if lastIndex(name, ':') <= lastIndex(name, '/') {
		return name + ":latest"
	}
	return name
}

func lastIndex(s string, b byte) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == b {
			return i
		}
	}
	return -1
}

// imageSizes are the node's images by each of their names, as the
// scheduler's cache keeps them.
func (n *NodeState) imageSizes() map[string]int64 {
	if n.images == nil {
		n.images = map[string]int64{}
		for _, img := range n.Node.Status.Images {
			for _, name := range img.Names {
				n.images[name] = img.SizeBytes
			}
		}
	}
	return n.images
}

// imageSpread counts the nodes that have each image name.
func (c *Cluster) imageSpread() map[string]int {
	if c.images != nil && *c.images != nil {
		return *c.images
	}
	m := map[string]int{}
	for _, n := range c.Nodes {
		for name := range n.imageSizes() {
			m[name]++
		}
	}
	if c.images == nil {
		c.images = new(map[string]int)
	}
	*c.images = m
	return m
}

// labelsCarry: every label of want is on have with the same value.
func labelsCarry(have, want labels.Set) bool {
	for k, v := range want {
		if hv, ok := have[k]; !ok || hv != v {
			return false
		}
	}
	return true
}
