package cmd

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// mode is one way to run the plugin. Each has its own command, as kubectl's
// multi-mode commands do (kubectl top node|pod): its usage, its flags and
// its examples in `kubectl scale-preview MODE --help`. The root keeps
// taking TYPE/NAME for every kind and runs the same mode.
type mode struct {
	name    string
	typ     string // MODE NAME runs as TYPE NAME; "" when the mode takes TYPE/NAME or no object
	use     string
	short   string
	long    string
	example string
	flags   func(o *Options, fl *pflag.FlagSet) // the mode's own flags
	implies string                              // the root's flag the subcommand stands for (--desired, --watch)
}

// Mode names, also the subcommands.
const (
	modeScaleIn = "scale-in"
	modeHPA     = "hpa"
	modeJob     = "job"
	modeNode    = "node"
	modePod     = "pod"
	modeDesired = "desired"
	modeWatch   = "watch"
)

// modeOrder is the order of the root help's list; a mode command added
// elsewhere (drain) and not named here comes after the known ones.
var modeOrder = []string{modeScaleIn, modeHPA, modeJob, modeNode, modePod, "drain", "rollout", modeDesired, modeWatch}

func (o *Options) scaleInFlags(fl *pflag.FlagSet) {
	o.addReplicasFlag(fl)
	o.addSteeringFlags(fl)
	o.addWatchFlags(fl)
}

func (o *Options) watchFlags(fl *pflag.FlagSet) {
	o.addReplicasFlag(fl)
	o.addSteeringFlags(fl)
}

func modes() []mode {
	return []mode{
		{name: modeScaleIn, use: "scale-in TYPE/NAME --replicas=N", short: "Which pods a Deployment, ReplicaSet, ReplicationController or StatefulSet scale-in deletes",
			long: scaleInHelp, example: scaleInExample, flags: (*Options).scaleInFlags},
		{name: modeHPA, typ: "hpa", use: "hpa NAME [--replicas=N]", short: "Which pods an autoscaler's next step (or --replicas) deletes from its target",
			long: hpaHelp, example: hpaExample, flags: (*Options).scaleInFlags},
		{name: modeJob, typ: "job", use: "job NAME --parallelism=N [--completions=N]", short: "Which pods lowering a Job's parallelism deletes",
			long: jobHelp, example: jobExample, flags: (*Options).addJobFlags},
		{name: modeNode, typ: "node", use: "node NAME", short: "Which pods the kubelet evicts under node pressure, in order",
			long: nodeHelp, example: nodeExample, flags: (*Options).addNodeFlags},
		{name: modePod, typ: "pod", use: "pod NAME", short: "Which pods the scheduler preempts to place a pending pod",
			long: podHelp, example: podExample, flags: (*Options).addPreemptionFlags},
		{name: modeDesired, use: "desired -f FILE|DIR", short: "The scale-ins that applying manifests causes (GitOps, before the merge)",
			long: desiredHelp, example: desiredExample, flags: (*Options).addDesiredFlags, implies: "desired"},
		{name: modeWatch, use: "watch TYPE/NAME --replicas=N", short: "Keep a scale-in's answer current while its pods change",
			long: watchHelp, example: watchExample, flags: (*Options).watchFlags, implies: "watch"},
	}
}

// modeFlagNames lists the flags a mode registers, on a set that never
// parses. Registering sets each flag's variable to its default: call it
// only while the command is built.
func modeFlagNames(o *Options, m mode) map[string]bool {
	fl := pflag.NewFlagSet(m.name, pflag.ContinueOnError)
	m.flags(o, fl)
	names := map[string]bool{}
	fl.VisitAll(func(f *pflag.Flag) { names[f.Name] = true })
	if m.implies != "" {
		names[m.implies] = true // harmless when given
	}
	return names
}

// addModeFlags registers on c every mode's flags, so that any invocation
// parses as it did on the root, and hides those that are not c's own:
// a flag of another mode is refused in Validate, with the reason.
func (o *Options) addModeFlags(c *cobra.Command, own map[string]bool) {
	for _, m := range modes() {
		fl := pflag.NewFlagSet(m.name, pflag.ContinueOnError)
		m.flags(o, fl)
		fl.VisitAll(func(f *pflag.Flag) {
			if c.Flags().Lookup(f.Name) != nil {
				return
			}
			f.Hidden = !own[f.Name]
			c.Flags().AddFlag(f)
		})
	}
}

// newModeCommand builds a mode's command. It runs exactly what the root
// runs for TYPE NAME (or --desired, --watch).
func (o *Options) newModeCommand(m mode) *cobra.Command {
	c := &cobra.Command{
		Use:           m.use,
		Short:         m.short,
		Long:          m.long,
		Example:       m.example,
		Args:          cobra.ArbitraryArgs, // parseArgs says what is wrong
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(c *cobra.Command, args []string) error {
			o.fixedMode = m.name
			if m.implies != "" {
				_ = c.Flags().Set(m.implies, "true")
			}
			if m.typ != "" {
				args = append([]string{m.typ}, args...)
			}
			return o.execute(c, args)
		},
	}
	if m.typ != "" { // NAME completes as TYPE NAME does on the root
		c.ValidArgsFunction = func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if complete := c.Root().ValidArgsFunction; complete != nil {
				return complete(c, append([]string{m.typ}, args...), toComplete)
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
	}
	o.addSharedFlags(c)
	own := maps.Clone(o.modeFlags[m.name])
	delete(own, m.implies) // the command says it
	o.addModeFlags(c, own)
	return c
}

// runMode is the mode of this run, from --desired or the target's kind.
func (o *Options) runMode() string {
	switch {
	case o.Desired:
		return modeDesired
	case o.ref.Kind == snapshot.Node:
		return modeNode
	case o.ref.Kind == kindPod:
		return modePod
	case o.ref.Kind == snapshot.Job:
		return modeJob
	case o.ref.Kind == kindHPA:
		return modeHPA
	}
	return modeScaleIn
}

// validateModeFlags refuses a flag that belongs to another mode than this
// run's, and a mode command given another mode's object.
func (o *Options) validateModeFlags() error {
	run := o.runMode()
	watched := o.fixedMode == modeWatch && (run == modeScaleIn || run == modeHPA) // watch follows either
	if f := o.fixedMode; f != "" && f != run && !watched {
		return withCode(ExitUsage, "%s is not a %s: run kubectl scale-preview %s (see kubectl scale-preview %s --help)", o.targetWords(), f, o.targetUsage(run), run)
	}
	own := o.modeFlags[run]
	for _, name := range o.changed {
		if !own[name] && !o.shared[name] {
			return withCode(ExitUsage, "--%s does not apply to %s; the flags of %s are in kubectl scale-preview %s --help", name, o.targetWords(), run, run)
		}
	}
	return nil
}

func (o *Options) targetWords() string {
	if o.Desired {
		return "--desired"
	}
	return strings.ToLower(o.ref.Kind) + "/" + o.ref.Name
}

func (o *Options) targetUsage(run string) string {
	switch run {
	case modeScaleIn, modeDesired:
		return strings.TrimPrefix(modes()[0].use, "scale-in ")
	}
	return run + " " + o.ref.Name
}

// modeCommands are the root's mode commands in the help's order: the
// registered subcommands, without cobra's help and completion.
func modeCommands(root *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() && c.Name() != "help" && c.Name() != "completion" {
			out = append(out, c)
		}
	}
	rank := func(c *cobra.Command) int {
		if i := slices.Index(modeOrder, c.Name()); i >= 0 {
			return i
		}
		return len(modeOrder)
	}
	slices.SortStableFunc(out, func(a, b *cobra.Command) int { return rank(a) - rank(b) })
	return out
}

// modeList is the root help's list: each mode's name, its one line and
// its first example command.
func modeList(root *cobra.Command) string {
	var b strings.Builder
	for _, c := range modeCommands(root) {
		fmt.Fprintf(&b, "  %-9s %s\n", c.Name(), c.Short)
		if ex := firstExample(c.Example); ex != "" {
			fmt.Fprintf(&b, "  %-9s   %s\n", "", ex)
		}
	}
	return b.String()
}

// firstExample is the first command line of a cobra Example.
func firstExample(example string) string {
	for _, line := range strings.Split(example, "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "kubectl ") {
			return l
		}
	}
	return ""
}
