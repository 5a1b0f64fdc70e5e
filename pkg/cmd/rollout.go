package cmd

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/scale-preview/scale-preview/pkg/rollout"
)

// RolloutOptions are `rollout`'s inputs; the root's common flags come
// through the embedded Options.
type RolloutOptions struct {
	*Options
	Images []string
	Resume bool

	kind, name string
	change     rollout.Change
}

const rolloutExample = `  # What does kubectl rollout restart deployment/web delete, step by step?
  kubectl scale-preview rollout deploy/web

  # A new image, offline, from a saved snapshot
  kubectl get nodes,pods,pdb,deploy,rs -A -o yaml > snap.yaml
  kubectl scale-preview rollout deploy/web --image app=registry/web:v2 -f snap.yaml -o json

  # A StatefulSet: reverse ordinal down to the partition
  kubectl scale-preview rollout sts/db -n shop

  # A DaemonSet: node by node, within maxUnavailable or maxSurge
  kubectl scale-preview rollout ds/agent -n kube-system`

// newRolloutCommand builds `kubectl scale-preview rollout`.
func newRolloutCommand(root *Options) *cobra.Command {
	o := &RolloutOptions{Options: root}
	c := &cobra.Command{
		Use:   "rollout TYPE/NAME [--image CONTAINER=IMAGE...] [--resume]",
		Short: "Which pods a Deployment's, StatefulSet's or DaemonSet's rollout deletes, step by step, and whether it completes",
		Long: "Predict the rollout that `kubectl rollout restart` (no change flag), `kubectl set image` (--image) or `kubectl rollout resume` " +
			"(--resume) starts, without changing anything: per step the old pods deleted (in rank order, with the rule that chose each), " +
			"the new pods created and where they fit, the lowest availability and each PodDisruptionBudget's state, then whether the rollout " +
			"completes, stalls (and what unblocks it) or does not start, and what a release whose new pods never become Ready costs. " +
			"Deployments (RollingUpdate and Recreate), StatefulSets and DaemonSets (RollingUpdate, OnDelete). Read-only. See docs/rollout.md.",
		Example: rolloutExample,
	}
	o.addRolloutFlags(c)
	return clusterCommand(c, func(_ *cobra.Command, args []string) error { return o.Complete(args) }, o.Validate, o.Run)
}

func (o *RolloutOptions) addRolloutFlags(c *cobra.Command) {
	fl := c.Flags()
	fl.StringArrayVar(&o.Images, "image", nil, "As kubectl set image: CONTAINER=IMAGE (repeatable; *=IMAGE sets every container).")
	fl.BoolVar(&o.Resume, "resume", false, "As kubectl rollout resume: the rollout a paused Deployment starts when resumed.")
	o.addClusterFlags(c, clusterFlagWords{victims: "the victims", now: " for pod ages and the restartedAt annotation", version: "rules",
		uncertain: "any step depends on a tie, the scheduler's scoring or timing"})
	fl.StringVar(&o.FeatureGates, "feature-gates", "", "Override feature gates that change the ranking or the scheduler's filters.")
}

// Complete parses TYPE/NAME (or TYPE NAME) and the change.
func (o *RolloutOptions) Complete(args []string) error {
	if len(args) == 1 && strings.Contains(args[0], "/") {
		args = strings.SplitN(args[0], "/", 2)
	}
	if len(args) != 2 || args[1] == "" {
		return withCode(ExitUsage, "name one workload: kubectl scale-preview rollout deploy/NAME (see --help)")
	}
	o.kind, o.name = rolloutKind(args[0]), args[1]
	if o.kind == "" {
		return withCode(ExitUnsupported, "%s has no rollout modelled: rollout takes a Deployment (deploy/NAME), a StatefulSet (sts/NAME) or a DaemonSet (ds/NAME)", args[0])
	}
	o.change = rollout.Change{Kind: rollout.ChangeRestart}
	if err := o.completeChange(); err != nil {
		return err
	}
	return o.completeCluster()
}

func (o *RolloutOptions) completeChange() error {
	if len(o.Images) > 0 && o.Resume {
		return withCode(ExitUsage, "--image and --resume are two changes: preview one at a time")
	}
	if o.Resume {
		o.change.Kind = rollout.ChangeResume
	}
	if len(o.Images) == 0 {
		return nil
	}
	o.change = rollout.Change{Kind: rollout.ChangeImage, Images: map[string]string{}}
	for _, kv := range o.Images {
		name, image, ok := strings.Cut(kv, "=")
		if !ok || name == "" || image == "" {
			return withCode(ExitUsage, "--image %q: want CONTAINER=IMAGE (as kubectl set image)", kv)
		}
		o.change.Images[name] = image
	}
	return nil
}

// rolloutKind: the kinds with a rollout modelled; "" for the others.
func rolloutKind(t string) string {
	switch strings.ToLower(t) {
	case "deploy", "deployment", "deployments", "deployment.apps", "deployments.apps":
		return "Deployment"
	case "sts", "statefulset", "statefulsets", "statefulset.apps", "statefulsets.apps":
		return "StatefulSet"
	case "ds", "daemonset", "daemonsets", "daemonset.apps", "daemonsets.apps":
		return "DaemonSet"
	}
	return ""
}

// Validate checks the rules' version.
func (o *RolloutOptions) Validate() error {
	return o.validateVersion()
}
