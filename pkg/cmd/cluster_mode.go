package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/scale-preview/scale-preview/pkg/disruption"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/source"
)

// The modes that read a whole cluster (drain, rollout, outage) run as
// kubectl's own commands do: Complete, Validate, Run, with the same file,
// output, time, version and uncertainty flags.

// clusterCommand finishes c as such a mode's command: any arguments (its
// Complete says what is wrong), errors printed once by main, and a flag
// error that points at the mode's help.
func clusterCommand(c *cobra.Command, complete func(*cobra.Command, []string) error, validate func() error, run func(context.Context) error) *cobra.Command {
	c.Args = cobra.ArbitraryArgs
	c.SilenceErrors, c.SilenceUsage = true, true
	c.RunE = func(c *cobra.Command, args []string) error {
		if err := complete(c, args); err != nil {
			return err
		}
		if err := validate(); err != nil {
			return err
		}
		return run(c.Context())
	}
	name := strings.Fields(c.Use)[0]
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return withCode(ExitUsage, "%s; see kubectl scale-preview %s --help", strconvNoise.ReplaceAllString(err.Error(), ""), name)
	})
	return c
}

// clusterFlagWords are a mode's own words for the shared flags.
type clusterFlagWords struct {
	victims   string // what -o name prints, e.g. "the victims"
	now       string // what --now is the reference time for
	version   string // what --kube-version applies, e.g. "rules"
	uncertain string // when --fail-if-uncertain exits 8
}

// addClusterFlags registers -f, -R, -o, --now, --kube-version and
// --fail-if-uncertain.
func (o *Options) addClusterFlags(c *cobra.Command, w clusterFlagWords) {
	fl := c.Flags()
	cmdutil.AddJsonFilenameFlag(fl, &o.Filenames, "Read objects from these files or directories (repeatable; \"-\" for stdin) instead of the cluster.")
	fl.BoolVarP(&o.Recursive, "recursive", "R", false, "Read the directories given with -f recursively.")
	o.PrintFlags.AddFlags(c)
	fl.Lookup("output").Usage = "Output format: the table (default), name (" + w.victims + " as pod/NAME), json, yaml, jsonpath=..., go-template=..."
	_ = fl.MarkHidden("show-managed-fields")
	fl.StringVar(&o.Now, "now", "", "Reference time (RFC3339) "+w.now+". Default: the current time.")
	fl.StringVar(&o.KubeVersion, "kube-version", "", fmt.Sprintf("Apply the %s of this Kubernetes version (1.%d to 1.%d). Default: detected from the cluster; offline, 1.%d.", w.version, rules.Oldest, rules.Newest, rules.Newest))
	fl.BoolVar(&o.FailIfUncertain, "fail-if-uncertain", false, fmt.Sprintf("Exit with code %d when %s (after printing).", ExitUncertain, w.uncertain))
}

// completeCluster resolves what every cluster mode needs after its own
// arguments: the namespace -o name prints bare names in, the files, the
// printer, the time and the rules.
func (o *Options) completeCluster() error {
	o.ref.Namespace = o.commandNamespace()
	if o.offline() {
		var err error
		if o.files, err = expandFiles(o.Filenames, o.Recursive); err != nil {
			return err
		}
	}
	if err := o.completePrinter(); err != nil {
		return err
	}
	return o.completeRules()
}

// validateVersion refuses a version the rules do not cover.
func (o *Options) validateVersion() error {
	if o.minor != 0 && (o.minor < rules.Oldest || o.minor > rules.Newest) {
		return withCode(ExitUsage, "version 1.%d is not supported: rules exist for 1.%d to 1.%d", o.minor, rules.Oldest, rules.Newest)
	}
	return nil
}

// checkBudgets refuses a budget the API server would have rejected.
func checkBudgets(cl *source.Cluster) error {
	for _, b := range disruption.Parse(cl.PDBs) {
		if b.Err != nil {
			return withCode(ExitBadFile, "%v (fix the file: the API server rejects such a budget)", b.Err)
		}
	}
	return nil
}

// finishCluster adds the cluster's warnings, prints, and under
// --fail-if-uncertain turns an uncertain answer into uncertain (exit 8).
func (o *Options) finishCluster(pred *prediction.Prediction, cl *source.Cluster, print func(*prediction.Prediction) error, uncertain error) error {
	pred.Warnings = append(pred.Warnings, clusterWarnings(cl)...)
	pred.Warnings = append(pred.Warnings, cl.Notes...)
	pred.Normalize()
	if err := print(pred); err != nil {
		return err
	}
	if o.FailIfUncertain && !pred.Certain {
		return uncertain
	}
	return nil
}

// uncertainIn is errUncertain (exit 8) in a mode's words.
type uncertainIn string

func (e uncertainIn) Error() string { return string(e) }

func (uncertainIn) Is(target error) bool { return target == errUncertain }
