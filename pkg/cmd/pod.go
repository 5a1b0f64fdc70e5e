package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/preemption"
	"github.com/scale-preview/scale-preview/pkg/printer"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/source"
)

// kindPod is the target kind of a preemption preview (pod/NAME).
const kindPod = "Pod"

func (o *Options) addPreemptionFlags(fl *pflag.FlagSet) {
	fl.StringVar(&o.SchedulerConfig, "scheduler-config", "", "For pod/NAME: the kube-scheduler's KubeSchedulerConfiguration file. Default: the default profile.")
}

// validatePod: a pod takes no --replicas; gates are the scheduler's.
func (o *Options) validatePod() error {
	if o.replicasSet {
		return withCode(ExitUsage, "--replicas does not apply to pod/%s: scale-preview predicts the scheduler's preemption for a pending pod", o.ref.Name)
	}
	if o.minor != 0 && (o.minor < rules.Oldest || o.minor > rules.Newest) {
		return withCode(ExitUsage, "version 1.%d is not supported: rules exist for 1.%d to 1.%d", o.minor, rules.Oldest, rules.Newest)
	}
	for name := range o.gates {
		if !slices.Contains(rules.SchedulerGateNames(), name) {
			return withCode(ExitUsage, "unknown feature gate %s: the scheduler gates that change preemption are %v", name, rules.SchedulerGateNames())
		}
	}
	return nil
}

// runPod predicts what kube-scheduler's DefaultPreemption does for a
// pending pod. With -f every object comes from the files (a pod that does
// not exist yet is a manifest there); without, from the cluster.
func (o *Options) runPod(ctx context.Context) error {
	cl, info, err := o.loadCluster(ctx)
	if err != nil {
		return err
	}
	pod, err := o.pendingPod(cl)
	if err != nil {
		return err
	}
	sr, unmodelled, err := o.schedulerRules(pod)
	if err != nil {
		return err
	}
	res, err := preemption.Predict(preemption.Input{Nodes: cl.Nodes, Pods: cl.Pods, PDBs: cl.PDBs, Namespaces: cl.Namespaces,
		Preemptor: pod, Rules: sr, Unmodelled: unmodelled})
	if err != nil {
		return err
	}
	pred := podPrediction(pod, res, cl, sr, info, o)
	pred.Warnings = append(append(res.Uncertain, clusterWarnings(cl)...), cl.Notes...)
	if o.SchedulerConfig == "" {
		pred.Warnings = append(pred.Warnings, "assumes the default scheduler profile and no extenders (pass --scheduler-config otherwise)")
	}
	pred.Normalize()
	err = o.printWith(pred, func() error {
		return printer.PreemptionTable(o.Out, pred, printer.TableOptions{Wide: *o.PrintFlags.OutputFormat == "wide", Width: o.width(o.Out)})
	})
	if err != nil {
		return err
	}
	if o.FailIfUncertain && !pred.Certain {
		return errUncertain
	}
	return nil
}

// pendingPod is the named pod, checked to be one the scheduler would
// try, with a manifest's priority resolved as admission would.
func (o *Options) pendingPod(cl *source.Cluster) (*corev1.Pod, error) {
	ns, name := o.ref.Namespace, o.ref.Name
	i := slices.IndexFunc(cl.Pods, func(p *corev1.Pod) bool { return p.Namespace == ns && p.Name == name })
	if i < 0 {
		if o.offline() {
			return nil, withCode(ExitNotFound, "pod %s/%s is not in the files (check the name and -n NAMESPACE)", ns, name)
		}
		return nil, withCode(ExitNotFound, "pod %s/%s not found (check the name and -n NAMESPACE)", ns, name)
	}
	pod := cl.Pods[i].DeepCopy()
	switch {
	case pod.Spec.NodeName != "":
		return nil, withCode(ExitUsage, "pod %s/%s already runs on node %s: preemption is decided only for a pending pod", ns, name, pod.Spec.NodeName)
	case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
		return nil, withCode(ExitUsage, "pod %s/%s has finished (%s): the scheduler does not schedule it", ns, name, pod.Status.Phase)
	}
	if pod.Spec.Priority == nil { // a manifest: admission has not run
		preemption.ApplyDefaults(pod)
		if err := preemption.ResolvePriority(pod, cl.PriorityClasses); err != nil {
			code := ExitError
			if errors.Is(err, preemption.ErrUnknownPriorityClass) {
				code = ExitBadFile
			}
			return nil, withCode(code, "%v", err)
		}
		if pod.UID == "" {
			pod.UID = "scale-preview-pending-pod"
		}
	}
	if o.offline() && !cl.Kinds["Node"] {
		return nil, withCode(ExitBadFile, "the files hold no Node: the scheduler's choice depends on every node (add kubectl get nodes -o yaml)")
	}
	if len(cl.Nodes) == 0 {
		return nil, withCode(ExitError, "the cluster has no nodes: nothing to schedule on")
	}
	if len(pod.Spec.SchedulingGates) > 0 {
		return nil, withCode(ExitUsage, "pod %s/%s has scheduling gates: the scheduler does not try it until they are removed", ns, name)
	}
	return pod, nil
}

// schedulerRules are the version's rules with --scheduler-config's
// candidate sampling, and what the profile has that is not modelled.
func (o *Options) schedulerRules(pod *corev1.Pod) (rules.SchedulerRules, []string, error) {
	sr := rules.Scheduler(o.minor, o.gates)
	if o.SchedulerConfig == "" {
		if pod.Spec.SchedulerName != corev1.DefaultSchedulerName {
			return sr, []string{fmt.Sprintf("schedulerName %q: its profile is unknown (pass --scheduler-config)", pod.Spec.SchedulerName)}, nil
		}
		return sr, nil, nil
	}
	data, err := os.ReadFile(o.SchedulerConfig)
	if err != nil {
		return sr, nil, &source.FileError{Name: o.SchedulerConfig, Err: err}
	}
	sc, err := preemption.ParseSchedulerConfig(data, pod.Spec.SchedulerName)
	if err != nil {
		return sr, nil, &source.FileError{Name: o.SchedulerConfig, Err: err}
	}
	if sc.MinCandidateNodesPercentage != nil {
		sr.MinCandidateNodesPercentage = *sc.MinCandidateNodesPercentage
	}
	if sc.MinCandidateNodesAbsolute != nil {
		sr.MinCandidateNodesAbsolute = *sc.MinCandidateNodesAbsolute
	}
	return sr, sc.Unmodelled, nil
}

// loadCluster reads the scheduler's view from files or the cluster, and
// the rules' version.
func (o *Options) loadCluster(ctx context.Context) (*source.Cluster, prediction.RulesInfo, error) {
	info := prediction.RulesInfo{VersionSource: "flag", VersionDetail: "--kube-version " + o.KubeVersion}
	if o.offline() {
		cl, err := source.ReadClusterFiles(o.files, o.In, o.ref.Namespace)
		if err != nil {
			return nil, info, err
		}
		if o.minor == 0 {
			o.minor = rules.Newest
			info = prediction.RulesInfo{VersionSource: "default", VersionDetail: "offline: the newest supported version; choose with --kube-version"}
		}
		return cl, info, nil
	}
	if err := o.connect(); err != nil {
		return nil, info, err
	}
	if o.minor == 0 {
		kv, err := source.DetectVersion(ctx, o.client)
		if err != nil {
			return nil, info, err
		}
		if o.minor, err = rules.ParseMinor(kv.Version); err != nil {
			return nil, info, err
		}
		info = prediction.RulesInfo{VersionSource: kv.Source, VersionDetail: kv.Detail}
		if o.minor < rules.Oldest || o.minor > rules.Newest {
			return nil, info, withCode(ExitUsage, "the cluster runs Kubernetes %s, outside the supported 1.%d-1.%d; choose the rules explicitly with --kube-version", kv.Version, rules.Oldest, rules.Newest)
		}
	}
	// The pending pod first: a missing one is "not found", not a list error.
	if _, err := o.client.CoreV1().Pods(o.ref.Namespace).Get(ctx, o.ref.Name, metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, info, withCode(ExitNotFound, "pod %s/%s not found (check the name and -n NAMESPACE)", o.ref.Namespace, o.ref.Name)
		}
		return nil, info, err
	}
	cl, err := source.ReadCluster(ctx, o.client)
	var pe *source.PermissionError
	if errors.As(err, &pe) {
		return nil, info, withCode(ExitForbidden, "%s", pe.Error())
	}
	return cl, info, err
}

// clusterWarnings: input the scheduler would read differently from how a
// reader expects (pods on unknown nodes, budgets that select nothing).
func clusterWarnings(cl *source.Cluster) []string {
	var out []string
	nodes := map[string]bool{}
	for _, n := range cl.Nodes {
		nodes[n.Name] = true
	}
	missing := map[string]bool{}
	for _, p := range cl.Pods {
		if p.Spec.NodeName != "" && !nodes[p.Spec.NodeName] {
			missing[p.Spec.NodeName] = true
		}
	}
	if len(missing) > 0 {
		out = append(out, fmt.Sprintf("pods are bound to %d node(s) missing from the node list (e.g. %s): the scheduler ignores them too, but the input may be incomplete", len(missing), slices.Sorted(mapsKeys(missing))[0]))
	}
	for _, b := range cl.PDBs {
		sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
		if err != nil || sel.Empty() {
			out = append(out, fmt.Sprintf("PodDisruptionBudget %s/%s has an empty or invalid selector: the scheduler counts no pod against it", b.Namespace, b.Name))
			continue
		}
		if !slices.ContainsFunc(cl.Pods, func(p *corev1.Pod) bool { return p.Namespace == b.Namespace && sel.Matches(labels.Set(p.Labels)) }) {
			out = append(out, fmt.Sprintf("PodDisruptionBudget %s/%s selects no pod", b.Namespace, b.Name))
		}
	}
	return out
}

func mapsKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// podPrediction renders the result as the plugin's document: victims of
// the most likely node, and the preemption section.
func podPrediction(pod *corev1.Pod, res *preemption.Result, cl *source.Cluster, sr rules.SchedulerRules, info prediction.RulesInfo, o *Options) *prediction.Prediction {
	policy := string(corev1.PreemptLowerPriority)
	if pod.Spec.PreemptionPolicy != nil {
		policy = string(*pod.Spec.PreemptionPolicy)
	}
	pe := &prediction.Preemption{Priority: *pod.Spec.Priority, PriorityClass: pod.Spec.PriorityClassName, PreemptionPolicy: policy,
		Eligible: res.Eligible, Reason: res.Reason, FitsOn: res.FitsOn, PotentialNodes: res.PotentialNodes, TriedNodes: res.Tried}
	owners := map[string]string{}
	for _, p := range cl.Pods {
		if ref := metav1.GetControllerOf(p); ref != nil {
			owners[p.Namespace+"/"+p.Name] = ref.Kind + "/" + ref.Name
		}
	}
	for _, o := range res.Outcomes {
		out := prediction.PreemptionOutcome{Node: o.Node, Probability: o.Probability, PDBViolations: o.PDBViolations}
		for _, v := range o.Victims {
			out.Victims = append(out.Victims, prediction.PreemptionVictim{Namespace: v.Pod.Namespace, Name: v.Pod.Name, Priority: v.Priority,
				Owner: owners[v.Pod.Namespace+"/"+v.Pod.Name], PDBs: nonNilStrings(v.PDBs), ViolatesPDB: v.Violates})
		}
		if out.Victims == nil {
			out.Victims = []prediction.PreemptionVictim{}
		}
		pe.Outcomes = append(pe.Outcomes, out)
	}
	if s := res.Separation; s != nil {
		pe.RunnerUp = &prediction.PreemptionRunnerUp{Node: s.RunnerUp, Criterion: s.Criterion, Nominated: s.Winner, Other: s.Other}
	}
	for _, n := range cl.Nodes {
		if why, ok := res.Excluded[n.Name]; ok {
			pe.Excluded = append(pe.Excluded, prediction.ExcludedNode{Node: n.Name, Reason: why})
		}
	}
	nonNil(&pe.FitsOn)
	nonNil(&pe.Outcomes)
	nonNil(&pe.Excluded)
	info.KubernetesVersion = fmt.Sprintf("1.%d", sr.Minor)
	info.FeatureGates = sr.Gates
	p := &prediction.Prediction{Target: prediction.Target{Kind: kindPod, Namespace: pod.Namespace, Name: pod.Name},
		ReferenceTime: o.now, Rules: info, Certain: res.Certain, Preemption: pe, NominatedNode: res.Nominated()}
	switch {
	case len(res.FitsOn) > 0:
		p.Message = fmt.Sprintf("fits on %d node(s) without preemption: nothing is deleted", len(res.FitsOn))
	case !res.Eligible:
		p.Message = "no preemption: " + res.Reason
	case len(res.Outcomes) == 0:
		p.Message = "no preemption: " + res.Reason
	default:
		top := res.Outcomes[0]
		p.Message = fmt.Sprintf("preempts %d pod(s) on node %s", len(top.Victims), top.Node)
		if !res.Certain {
			p.Message += fmt.Sprintf(" (%s; %d possible nodes)", printer.Percent(top.Probability), len(res.Outcomes))
		}
		for _, v := range top.Victims {
			// namespace/name: the victims need not be in the pending pod's
			// namespace, and a bare name reads as if they were.
			p.Victims = append(p.Victims, v.Pod.Namespace+"/"+v.Pod.Name)
			if v.Violates && len(v.PDBs) > 0 {
				p.Conflicts = append(p.Conflicts, prediction.Conflict{Kind: "PodDisruptionBudget", Name: v.Pod.Namespace + "/" + v.PDBs[0],
					Message: fmt.Sprintf("deleting %s/%s violates a PodDisruptionBudget (%s)", v.Pod.Namespace, v.Pod.Name, v.PDBs[0])})
			}
		}
	}
	return p
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNil[T any](s *[]T) {
	if *s == nil {
		*s = []T{}
	}
}
