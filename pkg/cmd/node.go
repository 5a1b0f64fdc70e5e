package cmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/scale-preview/scale-preview/pkg/eviction"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/printer"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
	"github.com/scale-preview/scale-preview/pkg/source"
)

func (o *Options) addNodeFlags(fl *pflag.FlagSet) {
	fl.StringArrayVar(&o.Assume, "assume", nil, "For node/NAME: take a signal's available value as given, e.g. memory.available=200Mi or nodefs.available=5% (repeatable).")
	o.addKubeletFlags(fl)
}

// validateNode checks the flags of a node preview: --replicas and the
// scale-in steering flags mean nothing there; --assume is signal=value.
func (o *Options) validateNode() error {
	if o.replicasSet {
		return withCode(ExitUsage, "--replicas does not apply to node/%s: a node preview shows the kubelet's eviction order (use --assume SIGNAL=VALUE for a what-if)", o.ref.Name)
	}
	if len(o.Spare)+len(o.Target) > 0 || o.TargetNode != "" {
		return withCode(ExitUsage, "--spare, --target and --target-node steer scale-ins; they do not apply to node/%s", o.ref.Name)
	}
	if _, err := o.assumptions(); err != nil {
		return err
	}
	return o.validateRules()
}

func (o *Options) assumptions() (map[eviction.Signal]string, error) {
	out := map[eviction.Signal]string{}
	for _, a := range o.Assume {
		sig, val, ok := strings.Cut(a, "=")
		if !ok || sig == "" || val == "" {
			return nil, withCode(ExitUsage, "--assume %q: want SIGNAL=VALUE, e.g. memory.available=200Mi", a)
		}
		if !eviction.Signal(sig).Valid(rules.Defaults(rules.Newest).Kubelet) {
			return nil, withCode(ExitUsage, "--assume %q: unknown signal %q (known: %s)", a, sig, signalList())
		}
		out[eviction.Signal(sig)] = val
	}
	return out, nil
}

func signalList() string {
	var s []string
	for _, sig := range eviction.AllSignals {
		s = append(s, string(sig))
	}
	return strings.Join(s, ", ")
}

// runNode previews the kubelet's node-pressure eviction on one node.
func (o *Options) runNode(ctx context.Context) error {
	snap, err := o.loadNode(ctx)
	if err != nil {
		return err
	}
	var node *corev1.Node
	for _, n := range snap.Nodes {
		if n.Name == o.ref.Name {
			node = n
		}
	}
	if node == nil {
		return withCode(ExitNotFound, "node %q is not in the files (save it with kubectl get node %s -o yaml)", o.ref.Name, o.ref.Name)
	}
	rs, info, err := o.kubeletRules(node)
	if err != nil {
		return err
	}
	in, assumedSummary, err := o.evictionInput(snap, node, rs)
	if err != nil {
		return err
	}
	res, err := eviction.Predict(in)
	var me *eviction.MismatchError
	switch {
	case errors.As(err, &me):
		return withCode(ExitBadFile, "%v: give the summary of node %s (kubectl get --raw /api/v1/nodes/%s/proxy/stats/summary)", err, node.Name, node.Name)
	case err != nil && strings.HasPrefix(err.Error(), "--assume"):
		return withCode(ExitUsage, "%v", err)
	case err != nil:
		return err
	}
	res.Assumed = append(res.Assumed, assumedSummary...)
	res.Assumed = append(res.Assumed, snap.Kubelet.Unavailable...)
	res.KubeletReads = kubeletReads(snap, o.offline())
	pred := nodePrediction(node, res, rs, info, snap.Notes, o.now)
	err = o.printWith(pred, func() error {
		return printer.EvictionTable(o.Out, pred, printer.TableOptions{Wide: *o.PrintFlags.OutputFormat == "wide", Width: o.width(o.Out)})
	})
	if err != nil {
		return err
	}
	if o.FailIfUncertain && !pred.Certain {
		return uncertainError(pred)
	}
	return nil
}

// kubeletRules are the rules of --kube-version, else of the node's
// kubelet version, else the newest.
func (o *Options) kubeletRules(node *corev1.Node) (rules.RuleSet, prediction.RulesInfo, error) {
	info := prediction.RulesInfo{VersionSource: "flag", VersionDetail: "--kube-version " + o.KubeVersion}
	if o.minor == 0 {
		kv := node.Status.NodeInfo.KubeletVersion
		if kv == "" {
			o.minor = rules.Newest
			info = prediction.RulesInfo{VersionSource: "default", VersionDetail: "the node reports no kubelet version; choose with --kube-version"}
		} else {
			var err error
			if o.minor, err = rules.ParseMinor(kv); err != nil {
				return rules.RuleSet{}, info, withCode(ExitUsage, "node %s: %v", node.Name, err)
			}
			info = prediction.RulesInfo{VersionSource: "kubelet", VersionDetail: "status.nodeInfo.kubeletVersion " + kv}
		}
	}
	rs, err := rules.For(o.minor, o.gates)
	if err != nil {
		return rs, info, withCode(ExitUsage, "%v", err)
	}
	return rs, info, nil
}

// evictionInput is the eviction model's input: the node's pods, its
// summary and configuration, and --assume checked against the version.
func (o *Options) evictionInput(snap *snapshot.Snapshot, node *corev1.Node, rs rules.RuleSet) (eviction.Input, []string, error) {
	assume, err := o.assumptions()
	if err != nil {
		return eviction.Input{}, nil, err
	}
	for sig := range assume {
		if !sig.Valid(rs.Kubelet) {
			return eviction.Input{}, nil, withCode(ExitUsage, "--assume: signal %s does not exist in the kubelet of Kubernetes 1.%d", sig, rs.Minor)
		}
	}
	cfg, err := kubeletConfig(snap, rs)
	if err != nil {
		return eviction.Input{}, nil, err
	}
	summary, assumedSummary, err := o.nodeSummary(snap, node)
	if err != nil {
		return eviction.Input{}, nil, err
	}
	var pods []*corev1.Pod
	for _, p := range snap.Pods {
		if p.Spec.NodeName == node.Name {
			pods = append(pods, p)
		}
	}
	in := eviction.Input{Node: node, Pods: pods, Summary: summary, Config: cfg, Rules: rs, Now: o.now, Assume: assume, NoPodStats: assumedSummary != nil}
	return in, assumedSummary, nil
}

// nodePrediction is the eviction result as the printers' prediction.
func nodePrediction(node *corev1.Node, res *eviction.Result, rs rules.RuleSet, info prediction.RulesInfo, notes []string, now time.Time) *prediction.Prediction {
	pred := &prediction.Prediction{
		Target:        prediction.Target{Kind: snapshot.Node, Name: node.Name},
		ReferenceTime: now,
		Rules:         info,
		Victims:       res.Victims,
		Certain:       res.Certain && len(res.Assumed) == 0,
		Eviction:      res,
		Warnings:      notes,
		Incomplete:    append(append([]string{}, res.Uncertain...), res.Assumed...),
	}
	pred.Rules.KubernetesVersion = rs.Version()
	pred.Rules.FeatureGates = rs.GatesOf(rules.KindKubelet)
	pred.Rules.Overridden = rs.Overridden
	pred.Message = nodeMessage(res)
	pred.Normalize()
	return pred
}

func nodeMessage(r *eviction.Result) string {
	switch {
	case r.Cut == 0 && r.UnderPressure:
		return fmt.Sprintf("node %s is under pressure but the kubelet would evict no pod", r.Node)
	case r.Cut == 0:
		return fmt.Sprintf("node %s is not under pressure: no pod would be evicted", r.Node)
	}
	return fmt.Sprintf("the kubelet would evict %d pod(s) from node %s (%s)", r.Cut, r.Node, r.Signal)
}

// loadNode reads the files, or the cluster (the kubelet directly, or
// through the node proxy).
func (o *Options) loadNode(ctx context.Context) (*snapshot.Snapshot, error) {
	if o.offline() {
		return source.ReadNodeFiles(o.files, o.In)
	}
	if err := o.connect(); err != nil {
		return nil, err
	}
	snap, err := (&source.Live{Client: o.client, Kubelet: o.kubeletAccess()}).LoadNode(ctx, o.ref.Name)
	if err == nil && slices.ContainsFunc(snap.Kubelet.Reads, func(r snapshot.KubeletRead) bool { return r.InsecureTLS }) {
		fmt.Fprintln(o.ErrOut, "Warning: --kubelet-insecure-tls: the kubelet's serving certificate did not verify, and your credentials were sent to it anyway")
	}
	return snap, err
}

// kubeletConfig decodes the one configz given (none: the defaults, assumed)
// and parses its thresholds as the kubelet would.
func kubeletConfig(snap *snapshot.Snapshot, rs rules.RuleSet) (eviction.Config, error) {
	k := snap.Kubelet
	if len(k.Configs) > 1 {
		return eviction.Config{}, withCode(ExitBadFile, "%d configz documents (%s): give the one of this node's kubelet", len(k.Configs), strings.Join(k.ConfigNames, ", "))
	}
	var kc *eviction.KubeletConfiguration
	if len(k.Configs) == 1 {
		var err error
		if kc, err = eviction.DecodeKubeletConfiguration(k.Configs[0]); err != nil {
			return eviction.Config{}, withCode(ExitBadFile, "%s: malformed kubelet configuration: %v", k.ConfigNames[0], err)
		}
	}
	cfg, err := eviction.ConfigFrom(kc, rs.Kubelet)
	if err != nil {
		return eviction.Config{}, withCode(ExitBadFile, "the kubelet of Kubernetes %s would reject this configuration: %v", rs.Version(), err)
	}
	return cfg, nil
}

// nodeSummary picks the node's summary. Without one (nodes/proxy
// forbidden), memory comes from the metrics API when it was read, and the
// answer says it rests on assumed figures.
func (o *Options) nodeSummary(snap *snapshot.Snapshot, node *corev1.Node) (*statsapi.Summary, []string, error) {
	var other []string
	for _, s := range snap.Kubelet.Summaries {
		if s.Node.NodeName == node.Name {
			return s, nil, nil
		}
		other = append(other, s.Node.NodeName)
	}
	if len(other) > 0 {
		return nil, nil, withCode(ExitBadFile, "the stats summary is node %s's, not %s's: give node %s's (kubectl get --raw /api/v1/nodes/%s/proxy/stats/summary)", strings.Join(other, ", "), node.Name, node.Name, node.Name)
	}
	if o.offline() && len(snap.Kubelet.Unavailable) == 0 {
		return nil, nil, withCode(ExitBadFile, "no stats summary of node %s among the files: save it with kubectl get --raw /api/v1/nodes/%s/proxy/stats/summary > summary.json", node.Name, node.Name)
	}
	s := &statsapi.Summary{Node: statsapi.NodeStats{NodeName: node.Name}}
	assumed := []string{"no stats summary: no pod's usage is known, so the order is only by what the kubelet reads without stats (priority)"}
	if mem := snap.Kubelet.MetricsMemory; mem > 0 {
		if c, ok := node.Status.Capacity[corev1.ResourceMemory]; ok && c.Value() > mem {
			avail, ws := uint64(c.Value()-mem), uint64(mem)
			s.Node.Memory = &statsapi.MemoryStats{Time: metav1.NewTime(o.now), AvailableBytes: &avail, WorkingSetBytes: &ws}
			assumed = append(assumed, "memory.available: node capacity minus the metrics API's usage")
		}
	}
	return s, assumed, nil
}

// kubeletReads says where the summary and configz came from: live, as
// read; offline, the files (a missing configz: the defaults, "none").
func kubeletReads(snap *snapshot.Snapshot, offline bool) []snapshot.KubeletRead {
	if !offline {
		return snap.Kubelet.Reads
	}
	reads := []snapshot.KubeletRead{{Document: "stats/summary", Path: source.PathFile}, {Document: "configz", Path: source.PathFile}}
	if len(snap.Kubelet.Configs) == 0 {
		reads[1].Path = source.PathNone
	}
	return reads
}
