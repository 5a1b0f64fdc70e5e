package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/scale-preview/scale-preview/pkg/rollout"
	"github.com/scale-preview/scale-preview/pkg/rules"
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
  kubectl scale-preview rollout sts/db -n shop`

// newRolloutCommand builds `kubectl scale-preview rollout`.
func newRolloutCommand(root *Options) *cobra.Command {
	o := &RolloutOptions{Options: root}
	c := &cobra.Command{
		Use:   "rollout TYPE/NAME [--image CONTAINER=IMAGE...] [--resume]",
		Short: "Which pods a Deployment's or StatefulSet's rollout deletes, step by step, and whether it completes",
		Long: "Predict the rollout that `kubectl rollout restart` (no change flag), `kubectl set image` (--image) or `kubectl rollout resume` " +
			"(--resume) starts, without changing anything: per step the old pods deleted (in rank order, with the rule that chose each), " +
			"the new pods created and where they fit, the lowest availability and each PodDisruptionBudget's state, then whether the rollout " +
			"completes, stalls (and what unblocks it) or does not start, and what a release whose new pods never become Ready costs. " +
			"Deployments (RollingUpdate and Recreate) and StatefulSets (RollingUpdate, OnDelete). Read-only. See docs/rollout.md.",
		Example:       rolloutExample,
		Args:          cobra.ArbitraryArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(c.Context())
		},
	}
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return withCode(ExitUsage, "%s; see kubectl scale-preview rollout --help", strconvNoise.ReplaceAllString(err.Error(), ""))
	})
	o.addRolloutFlags(c)
	return c
}

func (o *RolloutOptions) addRolloutFlags(c *cobra.Command) {
	fl := c.Flags()
	fl.StringArrayVar(&o.Images, "image", nil, "As kubectl set image: CONTAINER=IMAGE (repeatable; *=IMAGE sets every container).")
	fl.BoolVar(&o.Resume, "resume", false, "As kubectl rollout resume: the rollout a paused Deployment starts when resumed.")
	cmdutil.AddJsonFilenameFlag(fl, &o.Filenames, "Read objects from these files or directories (repeatable; \"-\" for stdin) instead of the cluster.")
	fl.BoolVarP(&o.Recursive, "recursive", "R", false, "Read the directories given with -f recursively.")
	o.PrintFlags.AddFlags(c)
	fl.Lookup("output").Usage = "Output format: the table (default), name (the victims as pod/NAME), json, yaml, jsonpath=..., go-template=..."
	_ = fl.MarkHidden("show-managed-fields")
	fl.StringVar(&o.Now, "now", "", "Reference time (RFC3339) for pod ages and the restartedAt annotation. Default: the current time.")
	fl.StringVar(&o.KubeVersion, "kube-version", "", fmt.Sprintf("Apply the rules of this Kubernetes version (1.%d to 1.%d). Default: detected from the cluster; offline, 1.%d.", rules.Oldest, rules.Newest, rules.Newest))
	fl.StringVar(&o.FeatureGates, "feature-gates", "", "Override feature gates that change the ranking or the scheduler's filters.")
	fl.BoolVar(&o.FailIfUncertain, "fail-if-uncertain", false, fmt.Sprintf("Exit with code %d when any step depends on a tie, the scheduler's scoring or timing (after printing).", ExitUncertain))
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
		return withCode(ExitUnsupported, "%s has no rollout modelled: rollout takes a Deployment (deploy/NAME) or a StatefulSet (sts/NAME)", args[0])
	}
	o.change = rollout.Change{Kind: rollout.ChangeRestart}
	if err := o.completeChange(); err != nil {
		return err
	}
	o.ref.Namespace = o.commandNamespace()
	var err error
	if o.offline() {
		if o.files, err = expandFiles(o.Filenames, o.Recursive); err != nil {
			return err
		}
	}
	if err := o.completePrinter(); err != nil {
		return err
	}
	return o.completeRules()
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
	}
	return ""
}

// Validate checks the rules' version.
func (o *RolloutOptions) Validate() error {
	if o.minor != 0 && (o.minor < rules.Oldest || o.minor > rules.Newest) {
		return withCode(ExitUsage, "version 1.%d is not supported: rules exist for 1.%d to 1.%d", o.minor, rules.Oldest, rules.Newest)
	}
	return nil
}
