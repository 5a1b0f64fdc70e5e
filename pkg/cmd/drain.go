package cmd

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/scale-preview/scale-preview/pkg/drain"
	"github.com/scale-preview/scale-preview/pkg/rules"
)

// DrainOptions are `drain`'s inputs: kubectl drain's flags, with the
// root's common ones (files, output, time, rules, kubeconfig) shared
// through the embedded Options.
type DrainOptions struct {
	*Options
	Selector                 string
	IgnoreDaemonSets         bool
	DeleteEmptyDirData       bool
	Force                    bool
	DisableEviction          bool
	PodSelector              string
	GracePeriod              int
	Timeout                  time.Duration
	SkipWaitForDeleteTimeout int

	nodes  []string
	podSel labels.Selector
}

const drainExample = `  # What would kubectl drain do to node-1, then node-2?
  kubectl scale-preview drain node-1 node-2 --ignore-daemonsets

  # A node pool, offline, from a saved snapshot
  kubectl get nodes,pods,pdb,deploy,rs,sts,ds,rc,jobs,priorityclasses -A -o yaml > snap.yaml
  kubectl scale-preview drain -l pool=blue -f snap.yaml -o json`

// newDrainCommand builds `kubectl scale-preview drain`.
func newDrainCommand(root *Options) *cobra.Command {
	o := &DrainOptions{Options: root, GracePeriod: -1}
	c := &cobra.Command{
		Use:   "drain NODE [NODE...] | -l SELECTOR",
		Short: "What kubectl drain does to nodes: evictions, PDB waits, replacements",
		Long: "Predict what `kubectl drain` does with the same flags, without cordoning or evicting anything: which pods kubectl refuses, " +
			"skips or evicts, which evictions wait on a PodDisruptionBudget and for what, where the controllers' replacements can go, " +
			"and per node whether the drain ends (drained), never ends (blocked) or never starts (refused). Read-only. See docs/drain.md.",
		Example: drainExample,
	}
	o.addDrainFlags(c)
	return clusterCommand(c, o.Complete, o.Validate, o.Run)
}

func (o *DrainOptions) addDrainFlags(c *cobra.Command) {
	fl := c.Flags()
	cmdutil.AddLabelSelectorFlagVar(c, &o.Selector)
	fl.BoolVar(&o.Force, "force", false, "As kubectl drain: continue even if there are pods that do not declare a controller.")
	fl.BoolVar(&o.IgnoreDaemonSets, "ignore-daemonsets", false, "As kubectl drain: ignore DaemonSet-managed pods.")
	fl.BoolVar(&o.DeleteEmptyDirData, "delete-emptydir-data", false, "As kubectl drain: continue even if there are pods using emptyDir.")
	fl.IntVar(&o.GracePeriod, "grace-period", -1, "As kubectl drain: seconds each pod gets to terminate; negative uses the pod's own.")
	fl.DurationVar(&o.Timeout, "timeout", 0, "As kubectl drain: how long kubectl waits before giving up on a node; 0 waits forever (a blocked node then stops the command).")
	fl.StringVar(&o.PodSelector, "pod-selector", "", "As kubectl drain: only pods matching this label selector.")
	fl.BoolVar(&o.DisableEviction, "disable-eviction", false, "As kubectl drain: delete instead of evicting, bypassing PodDisruptionBudgets.")
	fl.IntVar(&o.SkipWaitForDeleteTimeout, "skip-wait-for-delete-timeout", 0, "As kubectl drain: skip pods whose deletionTimestamp is older than N seconds.")
	o.addClusterFlags(c, clusterFlagWords{victims: "the victims", now: ", e.g. for --skip-wait-for-delete-timeout", version: "rules",
		uncertain: "any node's outcome depends on scoring or timing"})
	fl.StringVar(&o.FeatureGates, "feature-gates", "", "Override the scheduler's and API server's feature gates that change the drain.")
}

// Complete checks the arguments as kubectl drain does and resolves the
// files, time, rules and printer.
func (o *DrainOptions) Complete(c *cobra.Command, args []string) error {
	if len(args) == 0 && !c.Flags().Changed("selector") {
		return withCode(ExitUsage, "name the nodes to drain, or select them with -l/--selector (as kubectl drain)")
	}
	if len(args) > 0 && o.Selector != "" {
		return withCode(ExitUsage, "cannot specify both a node name and a --selector option (as kubectl drain)")
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
	sel, err := labels.Parse(o.PodSelector)
	if err != nil {
		return withCode(ExitUsage, "--pod-selector=<pod_selector> must be a valid label selector")
	}
	o.podSel = sel
	return o.completeCluster()
}

// Validate checks the rules' version and gates.
func (o *DrainOptions) Validate() error {
	if err := o.validateVersion(); err != nil {
		return err
	}
	known := append(rules.SchedulerGateNames(), rules.DisruptionGateNames()...)
	for name := range o.gates {
		if !slices.Contains(known, name) {
			return withCode(ExitUsage, "unknown feature gate %s: the gates that change a drain are %v", name, known)
		}
	}
	return nil
}

// Run reads the cluster, predicts and prints.
func (o *DrainOptions) Run(ctx context.Context) error {
	cl, info, err := o.loadDrainCluster(ctx)
	if err != nil {
		return err
	}
	nodes, err := o.drainNodes(cl)
	if err != nil {
		return err
	}
	if err := checkBudgets(cl); err != nil {
		return err
	}
	res, err := drain.Predict(o.drainInput(cl, nodes))
	var nf *drain.NodeNotFoundError
	if errors.As(err, &nf) {
		return withCode(ExitNotFound, "%v", nf)
	}
	if err != nil {
		return err
	}
	return o.finishCluster(drainPrediction(res, nodes, o, info), cl, o.printDrain, uncertainIn("some nodes' outcomes depend on the scheduler's scoring, on timing or on input the snapshot lacks (--fail-if-uncertain); see the warnings"))
}
