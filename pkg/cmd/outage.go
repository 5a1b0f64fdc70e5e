package cmd

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/scale-preview/scale-preview/pkg/outage"
	"github.com/scale-preview/scale-preview/pkg/rules"
)

// OutageOptions are `outage`'s inputs: which nodes fail and how, and the
// kube-controller-manager settings the plugin cannot read, with the
// root's common ones shared through the embedded Options.
type OutageOptions struct {
	*Options
	Selector       string
	Zone           string
	Condition      string
	GracePeriod    time.Duration
	MonitorPeriod  time.Duration
	LeaseDuration  time.Duration
	EvictionRate   float64
	SecondaryRate  float64
	ZoneThreshold  float64
	LargeClusterSz int

	nodes []string
	flags map[string]bool // the settings given
}

const outageExample = `  # What does the control plane do if node-1 and node-2 stop answering?
  kubectl scale-preview outage node-1 node-2

  # A whole zone, offline, from a saved snapshot; the kubelets report NotReady
  kubectl get nodes,pods,pdb,deploy,rs,sts,ds,rc,jobs,priorityclasses -A -o yaml > snap.yaml
  kubectl scale-preview outage --zone eu-west-1a --condition not-ready -f snap.yaml -o json

  # With a controller manager that taints faster than the default
  kubectl scale-preview outage -l pool=blue --node-monitor-grace-period 20s --node-eviction-rate 1`

// newOutageCommand builds `kubectl scale-preview outage`.
func newOutageCommand(root *Options) *cobra.Command {
	o := &OutageOptions{Options: root}
	c := &cobra.Command{
		Use:   "outage NODE [NODE...] | -l SELECTOR | --zone ZONE",
		Short: "What the control plane does when nodes stop answering: taints, deletions, replacements",
		Long: "Predict what the node lifecycle and taint eviction controllers do when the nodes fail: when each node is tainted " +
			"(at the rate its zone's state allows), when each pod is deleted (its tolerationSeconds), which pods stay or stay stuck " +
			"Terminating and what unblocks them, where the replacements can go, and which workloads and PodDisruptionBudgets fall short. " +
			"Times are seconds after the failure, from the kube-controller-manager settings assumed (flags below). Read-only. See docs/outage.md.",
		Example: outageExample,
	}
	o.addOutageFlags(c)
	return clusterCommand(c, o.Complete, o.Validate, o.Run)
}

func (o *OutageOptions) addOutageFlags(c *cobra.Command) {
	fl := c.Flags()
	cmdutil.AddLabelSelectorFlagVar(c, &o.Selector)
	fl.StringVar(&o.Zone, "zone", "", "Fail every node labelled topology.kubernetes.io/zone=ZONE.")
	fl.StringVar(&o.Condition, "condition", outage.ConditionUnreachable, "How the nodes fail: unreachable (the kubelet stops reporting) or not-ready (it reports NotReady).")
	fl.DurationVar(&o.GracePeriod, "node-monitor-grace-period", 0, "Assume kube-controller-manager's --node-monitor-grace-period. Default: the version's (50s from 1.32, 40s before).")
	fl.DurationVar(&o.MonitorPeriod, "node-monitor-period", 0, "Assume kube-controller-manager's --node-monitor-period. Default: 5s.")
	fl.DurationVar(&o.LeaseDuration, "node-lease-duration", 0, "Assume the kubelets' nodeLeaseDurationSeconds (they renew every quarter of it). Default: 40s.")
	fl.Float64Var(&o.EvictionRate, "node-eviction-rate", 0, "Assume kube-controller-manager's --node-eviction-rate (nodes tainted per second in a zone). Default: 0.1.")
	fl.Float64Var(&o.SecondaryRate, "secondary-node-eviction-rate", 0, "Assume kube-controller-manager's --secondary-node-eviction-rate (a partially disrupted large zone). Default: 0.01.")
	fl.Float64Var(&o.ZoneThreshold, "unhealthy-zone-threshold", 0, "Assume kube-controller-manager's --unhealthy-zone-threshold. Default: 0.55.")
	fl.IntVar(&o.LargeClusterSz, "large-cluster-size-threshold", 0, "Assume kube-controller-manager's --large-cluster-size-threshold. Default: 50.")
	o.addClusterFlags(c, clusterFlagWords{victims: "the deleted pods", now: " for the budgets' status", version: "rules and defaults",
		uncertain: "any fate depends on timing or on input the snapshot lacks"})
}

// Complete checks the arguments and resolves the files, time, rules and printer.
func (o *OutageOptions) Complete(c *cobra.Command, args []string) error {
	given := 0
	for _, set := range []bool{len(args) > 0, c.Flags().Changed("selector"), c.Flags().Changed("zone")} {
		if set {
			given++
		}
	}
	if given == 0 {
		return withCode(ExitUsage, "name the nodes that fail, or select them with -l/--selector or --zone")
	}
	if given > 1 {
		return withCode(ExitUsage, "give node names, -l/--selector or --zone, not more than one")
	}
	for _, a := range args {
		name := strings.TrimPrefix(strings.TrimPrefix(a, "nodes/"), "node/")
		if name == "" || strings.Contains(name, "/") {
			return withCode(ExitUsage, "%q is not a node name", a)
		}
		o.nodes = append(o.nodes, name)
	}
	if _, err := labels.Parse(o.Selector); err != nil {
		return withCode(ExitUsage, "--selector: %v", err)
	}
	o.flags = map[string]bool{}
	c.Flags().Visit(func(f *pflag.Flag) { o.flags[f.Name] = true })
	return o.completeCluster()
}

// Validate checks the version, the condition and the settings.
func (o *OutageOptions) Validate() error {
	if err := o.validateVersion(); err != nil {
		return err
	}
	if o.FeatureGates != "" {
		return withCode(ExitUsage, "outage reads no feature gate: drop --feature-gates")
	}
	if o.Condition != outage.ConditionUnreachable && o.Condition != outage.ConditionNotReady {
		return withCode(ExitUsage, "--condition %q: use unreachable or not-ready", o.Condition)
	}
	checks := []struct {
		name string
		bad  bool
	}{
		{"node-monitor-grace-period", o.GracePeriod <= 0}, {"node-monitor-period", o.MonitorPeriod <= 0}, {"node-lease-duration", o.LeaseDuration <= 0},
		{"node-eviction-rate", o.EvictionRate < 0}, {"secondary-node-eviction-rate", o.SecondaryRate < 0},
		{"unhealthy-zone-threshold", o.ZoneThreshold < 0 || o.ZoneThreshold > 1}, {"large-cluster-size-threshold", o.LargeClusterSz < 0},
	}
	for _, c := range checks {
		if o.flags[c.name] && c.bad {
			return withCode(ExitUsage, "--%s is out of range: durations must be positive, rates at least 0, the threshold between 0 and 1", c.name)
		}
	}
	return nil
}

// settings are the version's defaults with the flags given on top.
func (o *OutageOptions) settings() outage.Settings {
	r := rules.Outage(o.minor)
	set := func(name string, apply func()) {
		if o.flags[name] {
			apply()
		}
	}
	set("node-monitor-grace-period", func() { r.NodeMonitorGracePeriod = o.GracePeriod })
	set("node-monitor-period", func() { r.NodeMonitorPeriod = o.MonitorPeriod })
	set("node-lease-duration", func() { r.LeaseRenewInterval = o.LeaseDuration / 4 })
	set("node-eviction-rate", func() { r.NodeEvictionRate = o.EvictionRate })
	set("secondary-node-eviction-rate", func() { r.SecondaryNodeEvictionRate = o.SecondaryRate })
	set("unhealthy-zone-threshold", func() { r.UnhealthyZoneThreshold = o.ZoneThreshold })
	set("large-cluster-size-threshold", func() { r.LargeClusterSizeThreshold = o.LargeClusterSz })
	return outage.Settings{Condition: o.Condition, OutageRules: r}
}

// Run reads the cluster, predicts and prints.
func (o *OutageOptions) Run(ctx context.Context) error {
	cl, info, err := o.loadOutageCluster(ctx)
	if err != nil {
		return err
	}
	nodes, err := o.outageNodes(cl)
	if err != nil {
		return err
	}
	if err := checkBudgets(cl); err != nil {
		return err
	}
	res, err := outage.Predict(o.outageInput(cl, nodes))
	var nf *outage.NodeNotFoundError
	if errors.As(err, &nf) {
		return withCode(ExitNotFound, "%v", nf)
	}
	if err != nil {
		return err
	}
	return o.finishCluster(outagePrediction(res, nodes, o, info), cl, o.printOutage, uncertainIn("some fates depend on timing, on the scheduler's scoring or on input the snapshot lacks (--fail-if-uncertain); see the warnings"))
}
