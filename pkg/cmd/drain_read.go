package cmd

import (
	"context"
	"errors"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/scale-preview/scale-preview/pkg/drain"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/source"
)

// loadDrainCluster reads the files, or the cluster: the named nodes
// first (a missing one is "not found", as kubectl drain says before it
// cordons anything), then everything a drain reads.
func (o *DrainOptions) loadDrainCluster(ctx context.Context) (*source.Cluster, prediction.RulesInfo, error) {
	if o.offline() {
		return o.loadDrainFiles()
	}
	info, err := o.liveRules(ctx)
	if err != nil {
		return nil, info, err
	}
	for _, n := range o.nodes {
		if _, err := o.client.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, info, withCode(ExitNotFound, "node %q not found", n)
			}
			if apierrors.IsForbidden(err) {
				return nil, info, withCode(ExitForbidden, "%s", (&source.PermissionError{What: "get nodes", Err: err, Purpose: "predicting a drain"}).Error())
			}
			return nil, info, err
		}
	}
	cl, err := source.ReadDrainCluster(ctx, o.client)
	var pe *source.PermissionError
	if errors.As(err, &pe) {
		return nil, info, withCode(ExitForbidden, "%s", pe.Error())
	}
	return cl, info, err
}

func (o *DrainOptions) loadDrainFiles() (*source.Cluster, prediction.RulesInfo, error) {
	info := prediction.RulesInfo{VersionSource: "flag", VersionDetail: "--kube-version " + o.KubeVersion}
	ns, _, err := o.configFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil || ns == "" {
		ns = corev1.NamespaceDefault
	}
	cl, err := source.ReadClusterFiles(o.files, o.In, ns)
	if err != nil {
		return nil, info, err
	}
	if !cl.Kinds["Node"] {
		return nil, info, withCode(ExitBadFile, "the files hold no Node: a drain needs every node (add kubectl get nodes -o yaml)")
	}
	if o.minor == 0 {
		o.minor = rules.Newest
		info = prediction.RulesInfo{VersionSource: "default", VersionDetail: "offline: the newest supported version; choose with --kube-version"}
	}
	return cl, info, nil
}

// drainNodes are the nodes in kubectl's order: as named, or as the API
// lists the selector's (by name).
func (o *DrainOptions) drainNodes(cl *source.Cluster) ([]string, error) {
	if o.Selector == "" && len(o.nodes) > 0 {
		return o.namedNodes(cl, o.nodes)
	}
	sel, _ := labels.Parse(o.Selector)
	return selectedNodes(cl, sel), nil
}

// namedNodes are names, each checked to be a node of cl.
func (o *Options) namedNodes(cl *source.Cluster, names []string) ([]string, error) {
	for _, n := range names {
		if !slices.ContainsFunc(cl.Nodes, func(node *corev1.Node) bool { return node.Name == n }) {
			if o.offline() {
				return nil, withCode(ExitNotFound, "node %q is not in the files (check the name)", n)
			}
			return nil, withCode(ExitNotFound, "node %q not found", n)
		}
	}
	return names, nil
}

// selectedNodes are the names of cl's nodes that sel matches, sorted (as
// the API lists them).
func selectedNodes(cl *source.Cluster, sel labels.Selector) []string {
	var out []string
	for _, n := range cl.Nodes {
		if sel.Matches(labels.Set(n.Labels)) {
			out = append(out, n.Name)
		}
	}
	slices.Sort(out)
	return out
}

// drainInput is the model's input.
func (o *DrainOptions) drainInput(cl *source.Cluster, nodes []string) drain.Input {
	read := map[string]bool{}
	for _, k := range source.DrainKinds {
		read[k] = cl.Kinds[k]
	}
	var podSel labels.Selector
	if !o.podSel.Empty() {
		podSel = o.podSel
	}
	return drain.Input{Nodes: cl.Nodes, Drain: nodes, Pods: cl.Pods, PDBs: cl.PDBs, Workloads: cl.Workloads, Namespaces: cl.Namespaces,
		OwnersRead: read, Scheduler: rules.Scheduler(o.minor, o.gates), Disruption: rules.Disruption(o.minor, o.gates), Now: o.now,
		Options: drain.Options{IgnoreDaemonSets: o.IgnoreDaemonSets, DeleteEmptyDirData: o.DeleteEmptyDirData, Force: o.Force,
			DisableEviction: o.DisableEviction, PodSelector: podSel, GracePeriodSeconds: o.GracePeriod, Timeout: o.Timeout,
			SkipWaitForDeleteTimeoutSeconds: o.SkipWaitForDeleteTimeout}}
}
