// Package cmd is the kubectl scale-preview command: flags, the Options
// pattern (Complete, Validate, Run), and exit codes.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/restmapper"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
	"github.com/scale-preview/scale-preview/pkg/workload"
)

// Options holds the command's inputs, completed and validated before Run.
type Options struct {
	configFlags *genericclioptions.ConfigFlags
	PrintFlags  *genericclioptions.PrintFlags
	resource.FilenameOptions
	genericiooptions.IOStreams

	Replicas        int32
	Now             string
	KubeVersion     string
	FeatureGates    string
	FailIfUncertain bool
	ShowVersion     bool
	Spare           []string
	Target          []string
	TargetNode      string
	Assume          []string // node/NAME: signal=value what-ifs (node.go)
	SchedulerConfig string   // pod/NAME only (pod.go)

	replicasSet bool
	job         jobFlags
	recommend   bool // hpa/NAME without --replicas: the autoscaler's next step
	ref         snapshot.Ref
	files       []string // -f expanded to files
	now         time.Time
	gates       map[string]bool
	minor       int // from --kube-version; 0 = detect
	client      kubernetes.Interface
	metadata    metadata.Interface // completion's lists; set by tests, else built on demand
	mapper      meta.RESTMapper
	printer     printers.ResourcePrinter // nil for the plugin's own formats
	width       func(io.Writer) int      // the table's width; a test seam
	ctx         context.Context          // cancelled by Ctrl-C; nil in tests that call run
	detected    *prediction.RulesInfo    // the live rules' version, once decided

	desiredOptions // --desired (desired.go)

	fixedMode string                     // the mode command run; "" for the root
	changed   []string                   // the flags given, but kubectl's connection flags
	shared    map[string]bool            // the flags of every mode
	modeFlags map[string]map[string]bool // each mode's own flags (modes.go)
	kubelet   kubeletFlags               // node/NAME: the direct path (kubelet_flags.go)
}

// NewOptions returns Options with kubectl's standard config and print flags.
func NewOptions(streams genericiooptions.IOStreams) *Options {
	return &Options{
		configFlags: genericclioptions.NewConfigFlags(true),
		// No TypeSetter: Normalize types the document already, and the
		// TypeSetter would deep-copy it first (0.35 s for 20,000 pods).
		PrintFlags: genericclioptions.NewPrintFlags(""),
		IOStreams:  streams,
		width:      terminalWidth,
	}
}

// NewCommand builds the root command and a command per mode. The root
// takes TYPE/NAME for every kind (and --desired); each mode command holds
// its own usage, flags and examples and runs the same code.
func NewCommand(o *Options) *cobra.Command {
	c := &cobra.Command{
		Use:           "kubectl-scale_preview TYPE/NAME --replicas=N",
		Short:         "Predict which pods Kubernetes would delete or evict, in order, and which rule decided each",
		Args:          cobra.ArbitraryArgs, // parseArgs says what is wrong
		SilenceErrors: true,
		SilenceUsage:  true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl scale-preview"},
		RunE: func(c *cobra.Command, args []string) error {
			if o.ShowVersion {
				return printVersion(o.Out, *o.PrintFlags.OutputFormat)
			}
			return o.execute(c, args)
		},
	}
	c.SetOut(o.Out)
	c.SetErr(o.ErrOut)
	c.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		msg := strconvNoise.ReplaceAllString(err.Error(), "")
		return withCode(ExitUsage, "%s; see %s --help", msg, c.CommandPath())
	})
	o.shared = sharedFlagNames(o)
	o.addSharedFlags(c)
	c.Flags().BoolVar(&o.ShowVersion, "version", false, "Print the plugin's version and the supported Kubernetes rule versions (-o json or yaml for a document).")
	o.modeFlags = map[string]map[string]bool{}
	for _, m := range modes() {
		o.modeFlags[m.name] = modeFlagNames(o, m)
	}
	rootOwn := maps.Clone(o.modeFlags[modeScaleIn])
	maps.Copy(rootOwn, o.modeFlags[modeDesired])
	o.addModeFlags(c, rootOwn)
	o.configFlags.AddFlags(c.PersistentFlags())
	for _, m := range modes() {
		c.AddCommand(o.newModeCommand(m))
	}
	c.CompletionOptions.DisableDefaultCmd = true // kubectl completes plugins through kubectl_complete-scale_preview
	c.AddCommand(newDrainCommand(o))
	c.AddCommand(newOutageCommand(o))
	c.AddCommand(newRolloutCommand(o))
	setHelp(c)
	registerCompletions(c, o)
	return c
}

// addSharedFlags registers the flags of every mode.
func (o *Options) addSharedFlags(c *cobra.Command) {
	fl := c.Flags()
	cmdutil.AddJsonFilenameFlag(fl, &o.Filenames, "Read objects from these files or directories (repeatable; \"-\" for stdin) instead of the cluster.")
	fl.BoolVarP(&o.Recursive, "recursive", "R", false, "Read the directories given with -f recursively.")
	o.PrintFlags.AddFlags(c)
	fl.Lookup("output").Usage = "Output format: the table (default), wide, name (the victims as pod/NAME, when all are in the command's namespace), json, yaml, " +
		"jsonpath=..., jsonpath-file=..., go-template=..., go-template-file=..."
	_ = fl.MarkHidden("show-managed-fields") // the document has no managed fields
	fl.StringVar(&o.Now, "now", "", "Reference time (RFC3339) for age-based rules. Default: the current time.")
	fl.StringVar(&o.KubeVersion, "kube-version", "", fmt.Sprintf("Apply the rules of this Kubernetes version (1.%d to 1.%d). Default: detected from the cluster; offline, 1.%d.", rules.Oldest, rules.Newest, rules.Newest))
	fl.StringVar(&o.FeatureGates, "feature-gates", "", "Override the controller-manager's feature gates, e.g. PodDeletionCost=false.")
	fl.BoolVar(&o.FailIfUncertain, "fail-if-uncertain", false, fmt.Sprintf("Exit with code %d, after printing, when some fate is not determined or rests on assumed figures.", ExitUncertain))
}

// sharedFlagNames lists the flags of every mode (and the root's --version).
func sharedFlagNames(o *Options) map[string]bool {
	scratch := &cobra.Command{}
	o.addSharedFlags(scratch)
	names := map[string]bool{"version": true}
	scratch.Flags().VisitAll(func(f *pflag.Flag) { names[f.Name] = true })
	return names
}

func (o *Options) addReplicasFlag(fl *pflag.FlagSet) {
	fl.Int32Var(&o.Replicas, "replicas", 0, "The replica count to preview (required; for hpa/NAME optional: the autoscaler's next step).")
}

func (o *Options) addSteeringFlags(fl *pflag.FlagSet) {
	fl.StringSliceVar(&o.Spare, "spare", nil, "Pods that must survive: print the pod-deletion-cost annotations that make the controller spare them.")
	fl.StringSliceVar(&o.Target, "target", nil, "Pods that should die: print the pod-deletion-cost annotations that make the controller pick them.")
	fl.StringVar(&o.TargetNode, "target-node", "", "Prefer victims on this node: print the annotations that make the controller pick them.")
}

// execute completes, validates and runs, whichever command was called.
func (o *Options) execute(c *cobra.Command, args []string) error {
	if err := o.Complete(c, args); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return err
	}
	return o.Run(c.Context())
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
	fmt.Fprintln(o.ErrOut, "error: "+msg)
	return code
}

// strconvNoise is the parser's prefix in pflag's messages, e.g.
// `strconv.ParseInt: parsing "2147483648": ` before "value out of range".
var strconvNoise = regexp.MustCompile(`strconv\.Parse\w+: parsing "[^"]*": `)

var errUncertain = errors.New("some pods' fates are left to chance (--fail-if-uncertain); see the open choices (JSON: contenders)")

// Complete resolves the files, the target reference, the time, the rules
// and the printer.
func (o *Options) Complete(c *cobra.Command, args []string) error {
	o.replicasSet = c.Flags().Changed("replicas")
	c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
		if f.Changed {
			o.changed = append(o.changed, f.Name)
		}
	})
	if err := o.validateWatch(); err != nil {
		return err
	}
	if o.Desired {
		return o.completeDesired(args)
	}
	arg, err := parseArgs(args)
	if err != nil {
		return err
	}
	if err := o.completePrinter(); err != nil {
		return err
	}
	if o.ref, err = o.resolve(arg); err != nil {
		return err
	}
	o.ref.Namespace = o.commandNamespace()
	o.completeJob(c)
	if !o.replicasSet && o.ref.Kind == snapshot.HorizontalPodAutoscaler {
		// Without --replicas an autoscaler previews its own next step.
		o.Replicas, o.replicasSet, o.recommend = workload.UseRecommendation, true, true
	}
	return o.completeRules()
}

// commandNamespace is the namespace the command runs in: -n, else the
// context's; offline, -n even where the kubeconfig cannot be loaded.
func (o *Options) commandNamespace() string {
	ns, explicit, err := o.configFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil || ns == "" {
		ns = "default"
	}
	if o.offline() && !explicit && o.configFlags.Namespace != nil && *o.configFlags.Namespace != "" {
		ns = *o.configFlags.Namespace
	}
	return ns
}

func (o *Options) offline() bool { return len(o.Filenames) > 0 && !o.Desired }

// resolve maps the type with the built-in kinds first: they are the same
// on every cluster, and a kind the plugin does not model is refused without
// a round trip. Other types (custom resources) are asked of the cluster's
// RESTMapper, so the refusal names the real kind.
func (o *Options) resolve(arg objectArg) (snapshot.Ref, error) {
	if o.offline() {
		files, err := expandFiles(o.Filenames, o.Recursive)
		if err != nil {
			return snapshot.Ref{}, err
		}
		o.files = files
	}
	ref, err := resolve(newOfflineMapper(), arg)
	var ut *unknownTypeError
	if o.offline() || !errors.As(err, &ut) {
		return ref, err
	}
	if err := o.connect(); err != nil {
		return snapshot.Ref{}, err
	}
	return resolve(o.mapper, arg)
}

// connect builds the client and the cluster's RESTMapper, once.
func (o *Options) connect() error {
	if o.mapper != nil {
		return nil
	}
	if o.client != nil { // injected (tests): discovery through the same client
		d := o.client.Discovery()
		o.mapper = restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(d)), d, nil)
		return nil
	}
	cfg, err := o.configFlags.ToRESTConfig()
	if err != nil {
		return o.configError(err)
	}
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	if cfg.QPS == 0 {
		// client-go's default of 5 requests a second, not the reading,
		// bounded a list of many pages (150,000 pods: 300 pages, 60 s);
		// kubectl allows its discovery 50.
		cfg.QPS, cfg.Burst = 50, 100
	}
	if o.client, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	o.mapper, err = o.configFlags.ToRESTMapper()
	return err
}

func (o *Options) completeRules() (err error) {
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

// completePrinter picks kubectl's printer for -o json, yaml, jsonpath and
// templates; the table, wide and name are the plugin's own.
func (o *Options) completePrinter() error {
	switch *o.PrintFlags.OutputFormat {
	case "", "wide", "name":
		if !o.PrintFlags.OutputFlagSpecified() && o.PrintFlags.TemplatePrinterFlags.TemplateArgument != nil && *o.PrintFlags.TemplatePrinterFlags.TemplateArgument != "" {
			break // --template alone means go-template, as in kubectl
		}
		return nil
	}
	p, err := o.PrintFlags.ToPrinter()
	if err != nil {
		return withCode(ExitUsage, "--output %q is not supported: use one of (table), %s", *o.PrintFlags.OutputFormat,
			strings.Join(append([]string{"wide"}, o.PrintFlags.AllowedFormats()...), ", "))
	}
	o.printer = p
	if *o.PrintFlags.OutputFormat == "json" {
		o.printer = streamJSON{kubectl: p}
	}
	return nil
}

// Validate checks the flags against the mode, the replica count and the
// rule version.
func (o *Options) Validate() error {
	if err := o.validateMode(); err != nil {
		return err
	}
	return o.validateModeFlags()
}

// validateMode checks what each mode needs, with its own words.
func (o *Options) validateMode() error {
	if err := o.validateKubeletFlags(); err != nil {
		return err
	}
	if err := o.validateWatchKind(); err != nil {
		return err
	}
	if done, err := o.validateJob(); done {
		return err
	}
	if o.Desired {
		return o.validateRules()
	}
	if o.ref.Kind == snapshot.Node {
		return o.validateNode()
	}
	if o.ref.Kind == kindPod {
		return o.validatePod()
	}
	if !o.replicasSet {
		return withCode(ExitUsage, "--replicas is required, e.g. kubectl scale-preview deploy/web --replicas=3 (for hpa/NAME it is optional)")
	}
	if o.Replicas < 0 && !o.recommend {
		return withCode(ExitUsage, "--replicas must not be negative, got %d", o.Replicas)
	}
	return o.validateRules()
}

// validateRules checks --kube-version and --feature-gates together.
func (o *Options) validateRules() error {
	if o.minor != 0 {
		if _, err := rules.For(o.minor, o.gates); err != nil {
			return withCode(ExitUsage, "%v", err)
		}
	}
	return nil
}
