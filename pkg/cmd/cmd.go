// Package cmd is the kubectl scale-preview command: flags, the Options
// pattern (Complete, Validate, Run), and exit codes.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/util/completion"

	"github.com/scale-preview/scale-preview/pkg/complete"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/printer"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/runbook"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
	"github.com/scale-preview/scale-preview/pkg/source"
	"github.com/scale-preview/scale-preview/pkg/workload"
)

const example = `  # Which pods would die if deploy/web were scaled to 3, and why
  kubectl scale-preview deploy/web --replicas=3

  # The same for a ReplicaSet, a ReplicationController or a StatefulSet
  kubectl scale-preview rs web-7d9f8 --replicas=1 -n shop
  kubectl scale-preview sts/db --replicas=2

  # Machine-readable, for a runbook; stop if chance decides any victim
  kubectl scale-preview deploy/web --replicas=3 -o json --fail-if-uncertain

  # Offline, from a saved snapshot, with the rules of Kubernetes 1.27
  kubectl get deploy,rs,pods -n shop -o yaml > snap.yaml
  kubectl scale-preview -f snap.yaml deploy/web --replicas=3 -n shop --kube-version 1.27`

// Options holds the command's inputs, completed and validated before Run.
type Options struct {
	configFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	Replicas        string
	Filename        string
	Output          string
	Now             string
	KubeVersion     string
	FeatureGates    string
	FailIfUncertain bool
	ShowVersion     bool
	Spare           []string
	Target          []string
	TargetNode      string

	args     []string
	ref      snapshot.Ref
	replicas int32
	now      time.Time
	gates    map[string]bool
	minor    int // from --kube-version; 0 = detect
	client   kubernetes.Interface
	ctx      context.Context // cancelled by Ctrl-C; nil in tests that call run
}

// NewOptions returns Options with kubectl's standard config flags.
func NewOptions(streams genericiooptions.IOStreams) *Options {
	return &Options{configFlags: genericclioptions.NewConfigFlags(true), IOStreams: streams}
}

// NewCommand builds the cobra command.
func NewCommand(o *Options) *cobra.Command {
	c := &cobra.Command{
		Use:   "kubectl-scale_preview TYPE/NAME --replicas=N",
		Short: "Predict which pods a scale-in deletes, in order, and which rule decided each",
		Long: `Predict which pods the Kubernetes controller would delete if a Deployment,
ReplicaSet, ReplicationController or StatefulSet were scaled to --replicas,
in deletion order, and which rule decided each comparison. It reads the live
pods (or a file with -f) and changes nothing in the cluster.

Where the controller leaves the choice to chance (full ties, its unstable
sort), the affected pods are shown with their probability of deletion.`,
		Example:       example,
		Args:          cobra.MaximumNArgs(2),
		SilenceErrors: true,
		SilenceUsage:  true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl scale-preview"},
		RunE: func(c *cobra.Command, args []string) error {
			if o.ShowVersion {
				return printVersion(o.Out, o.Output)
			}
			if err := o.Complete(c, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(c.Context())
		},
	}
	c.SetOut(o.Out)
	c.SetErr(o.ErrOut)
	fl := c.Flags()
	fl.StringVar(&o.Replicas, "replicas", "", "The replica count to preview (required).")
	fl.StringVarP(&o.Filename, "filename", "f", "", "Read objects from this YAML or JSON file (\"-\" for stdin) instead of the cluster.")
	fl.StringVarP(&o.Output, "output", "o", "", "Output format: "+strings.Join(printer.Formats, "|")+".")
	fl.StringVar(&o.Now, "now", "", "Reference time (RFC3339) for age-based rules. Default: the current time.")
	fl.StringVar(&o.KubeVersion, "kube-version", "", fmt.Sprintf("Apply the rules of this Kubernetes version (1.%d to 1.%d). Default: detected from the cluster; offline, 1.%d.", rules.Oldest, rules.Newest, rules.Newest))
	fl.StringVar(&o.FeatureGates, "feature-gates", "", "Override the controller-manager's feature gates, e.g. PodDeletionCost=false.")
	fl.BoolVar(&o.FailIfUncertain, "fail-if-uncertain", false, fmt.Sprintf("Exit with code %d when chance decides any pod's fate (after printing).", ExitUncertain))
	fl.StringSliceVar(&o.Spare, "spare", nil, "Pods that must survive: print the pod-deletion-cost annotations that make the controller spare them.")
	fl.StringSliceVar(&o.Target, "target", nil, "Pods that should die: print the pod-deletion-cost annotations that make the controller pick them.")
	fl.StringVar(&o.TargetNode, "target-node", "", "Prefer victims on this node: print the annotations that make the controller pick them.")
	fl.BoolVar(&o.ShowVersion, "version", false, "Print the plugin's version and the supported Kubernetes rule versions.")
	o.configFlags.AddFlags(c.PersistentFlags())

	f := cmdutil.NewFactory(o.configFlags)
	c.ValidArgsFunction = completion.SpecifiedResourceTypeAndNameNoRepeatCompletionFunc(f,
		[]string{"deployment", "replicaset", "replicationcontroller", "statefulset"})
	_ = c.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return printer.Formats, cobra.ShellCompDirectiveNoFileComp
	})
	_ = c.RegisterFlagCompletionFunc("kube-version", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return rules.Supported(), cobra.ShellCompDirectiveNoFileComp
	})
	_ = c.RegisterFlagCompletionFunc("namespace", func(c *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return completion.CompGetResource(f, "namespace", toComplete), cobra.ShellCompDirectiveNoFileComp
	})
	_ = c.RegisterFlagCompletionFunc("context", completion.ContextCompletionFunc)
	return c
}

// Main runs the command with args and returns the exit code. Errors are
// printed as one line on stderr.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o := NewOptions(genericiooptions.IOStreams{In: stdin, Out: stdout, ErrOut: stderr})
	ctx, stop := withInterrupt(stderr)
	defer stop()
	o.ctx = ctx
	return run(o, args)
}

func run(o *Options, args []string) int {
	c := NewCommand(o)
	c.SetArgs(args)
	c.SetIn(o.In)
	if o.ctx == nil {
		o.ctx = context.Background()
	}
	err := c.ExecuteContext(o.ctx)
	if err == nil {
		return ExitOK
	}
	if interrupted(o.ctx) {
		fmt.Fprintln(o.ErrOut, "error: interrupted")
		return ExitInterrupted
	}
	if errors.Is(err, errUncertain) {
		fmt.Fprintln(o.ErrOut, "error: "+err.Error())
		return ExitUncertain
	}
	code, msg := classify(err)
	if code == ExitError && isCobraUsage(err) {
		code = ExitUsage
	}
	fmt.Fprintln(o.ErrOut, "error: "+msg)
	return code
}

var errUncertain = errors.New("some pods' fates are left to chance (--fail-if-uncertain); see the open choices (JSON: contenders)")

func isCobraUsage(err error) bool {
	s := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand", "flag needs an argument", "invalid argument", "accepts at most", "unknown command"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// Complete resolves the target reference, the time and the namespace.
func (o *Options) Complete(_ *cobra.Command, args []string) error {
	o.args = args
	ref, err := parseTarget(args)
	if err != nil {
		return err
	}
	ns, explicit, err := o.configFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil || ns == "" {
		ns = "default"
	}
	if o.Filename != "" && !explicit && o.configFlags.Namespace != nil && *o.configFlags.Namespace != "" {
		ns = *o.configFlags.Namespace
	}
	ref.Namespace = ns
	o.ref = ref
	o.now = time.Now()
	if o.Now != "" {
		if o.now, err = time.Parse(time.RFC3339Nano, o.Now); err != nil {
			return withCode(ExitUsage, "--now %q is not an RFC3339 time (e.g. 2026-01-02T15:04:05Z)", o.Now)
		}
	}
	if o.KubeVersion != "" {
		if o.minor, err = rules.ParseMinor(o.KubeVersion); err != nil {
			return withCode(ExitUsage, "--kube-version: %v", err)
		}
	}
	if o.gates, err = rules.ParseGates(o.FeatureGates); err != nil {
		return withCode(ExitUsage, "--feature-gates: %v", err)
	}
	return nil
}

// Validate checks the replica count and the output format.
func (o *Options) Validate() error {
	if o.Replicas == "" {
		return withCode(ExitUsage, "--replicas is required, e.g. kubectl scale-preview deploy/web --replicas=3")
	}
	n, err := strconv.ParseInt(o.Replicas, 10, 32)
	if err != nil {
		return withCode(ExitUsage, "--replicas must be a whole number, got %q", o.Replicas)
	}
	if n < 0 {
		return withCode(ExitUsage, "--replicas must not be negative, got %d", n)
	}
	o.replicas = int32(n)
	switch o.Output {
	case "", "table", "wide", "json", "yaml":
	default:
		return withCode(ExitUsage, "--output %q is not supported: use one of %s", o.Output, strings.Join(printer.Formats, ", "))
	}
	if o.minor != 0 {
		if _, err := rules.For(o.minor, o.gates); err != nil {
			return withCode(ExitUsage, "%v", err)
		}
	}
	return nil
}

// Run reads the snapshot, predicts and prints.
func (o *Options) Run(ctx context.Context) error {
	var snap *snapshot.Snapshot
	var info prediction.RulesInfo
	var err error
	if o.Filename != "" {
		if snap, err = source.ReadFile(o.Filename, o.In, o.ref.Namespace); err != nil {
			return err
		}
		info = prediction.RulesInfo{VersionSource: "default", VersionDetail: fmt.Sprintf("offline: the newest supported version; choose with --kube-version")}
		if o.minor == 0 {
			o.minor = rules.Newest
		} else {
			info = prediction.RulesInfo{VersionSource: "flag", VersionDetail: "--kube-version " + o.KubeVersion}
		}
	} else {
		if o.client == nil {
			cfg, err := o.configFlags.ToRESTConfig()
			if err != nil {
				return o.configError(err)
			}
			cfg.ContentType = "application/vnd.kubernetes.protobuf"
			if o.client, err = kubernetes.NewForConfig(cfg); err != nil {
				return err
			}
		}
		if o.minor == 0 {
			kv, err := source.DetectVersion(ctx, o.client)
			if err != nil {
				return err
			}
			m, err := rules.ParseMinor(kv.Version)
			if err != nil {
				return err
			}
			o.minor = m
			info = prediction.RulesInfo{VersionSource: kv.Source, VersionDetail: kv.Detail}
			if m < rules.Oldest || m > rules.Newest {
				return withCode(ExitUsage, "the cluster runs Kubernetes %s, outside the supported 1.%d-1.%d; choose the rules explicitly with --kube-version", kv.Version, rules.Oldest, rules.Newest)
			}
		} else {
			info = prediction.RulesInfo{VersionSource: "flag", VersionDetail: "--kube-version " + o.KubeVersion}
		}
		live := &source.Live{Client: o.client}
		if snap, err = live.Load(ctx, o.ref); err != nil {
			return err
		}
	}
	check, err := complete.Check(snap, o.ref, o.Filename == "")
	if err != nil {
		return err
	}
	rs, err := rules.For(o.minor, o.gates)
	if err != nil {
		return withCode(ExitUsage, "%v", err)
	}
	wo := workload.Options{Rules: rs, Now: o.now, Seed: 1}
	pred, err := workload.Predict(snap, o.ref, o.replicas, wo)
	if err != nil {
		return err
	}
	check.Apply(pred)
	runbook.Analyze(snap, o.ref, pred)
	if req := (runbook.Request{Spare: o.Spare, Target: o.Target, TargetNode: o.TargetNode}); !req.Empty() {
		pred.Steering = runbook.Steer(snap, o.ref, o.replicas, wo, pred, req)
	}
	pred.Rules.VersionSource, pred.Rules.VersionDetail = info.VersionSource, info.VersionDetail
	pred.Warnings = workload.Dedupe(append(pred.Warnings, snap.Notes...))
	if err := printer.Print(o.Out, pred, o.Output); err != nil {
		return err
	}
	if o.FailIfUncertain && !pred.Certain {
		return uncertainError(pred)
	}
	return nil
}
