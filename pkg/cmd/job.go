package cmd

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/scale-preview/scale-preview/pkg/job"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// jobFlags are the flags of a Job scale-in: job/NAME --parallelism=N
// [--completions=N].
type jobFlags struct {
	parallelism, completions       int32
	parallelismSet, completionsSet bool
	replicasGiven                  bool
}

func (o *Options) addJobFlags(fl *pflag.FlagSet) {
	fl.Int32Var(&o.job.parallelism, "parallelism", 0, "For job/NAME: the parallelism to preview (instead of --replicas).")
	fl.Int32Var(&o.job.completions, "completions", 0, "For an Indexed job/NAME: the completions to preview, together with the same --parallelism (elastic Indexed Jobs).")
}

// completeJob reads the Job flags; for a Job the parallelism stands in for
// the replica count.
func (o *Options) completeJob(c *cobra.Command) {
	o.job.parallelismSet = c.Flags().Changed("parallelism")
	o.job.completionsSet = c.Flags().Changed("completions")
	o.job.replicasGiven = o.replicasSet
	if o.ref.Kind == snapshot.Job && o.job.parallelismSet && !o.replicasSet {
		o.Replicas, o.replicasSet = o.job.parallelism, true
	}
}

// validateJob checks the flags that belong to one kind or the other; done
// reports that the target is a Job and nothing else needs checking.
func (o *Options) validateJob() (done bool, err error) {
	isJob := o.ref.Kind == snapshot.Job
	switch {
	case !isJob && (o.job.parallelismSet || o.job.completionsSet):
		return true, withCode(ExitUsage, "--parallelism and --completions apply to job/NAME only, not to %s; use --replicas", o.ref.Kind)
	case !isJob:
		return false, nil
	case !o.job.parallelismSet || o.job.replicasGiven:
		return true, withCode(ExitUsage, "a Job scales by parallelism: give --parallelism=N (and for an elastic Indexed Job --completions=N with it), not --replicas")
	case o.job.parallelism < 0:
		return true, withCode(ExitUsage, "--parallelism must not be negative, got %d", o.job.parallelism)
	case o.job.completionsSet && o.job.completions < 0:
		return true, withCode(ExitUsage, "--completions must not be negative, got %d", o.job.completions)
	case len(o.Spare)+len(o.Target) > 0 || o.TargetNode != "":
		return true, withCode(ExitUsage, "--spare, --target and --target-node steer with pod-deletion-cost, which the Job controller does not read")
	}
	return true, o.validateRules()
}

// jobCompletions is the new completions, nil when not given.
func (o *Options) jobCompletions() *int32 {
	if !o.job.completionsSet {
		return nil
	}
	c := o.job.completions
	return &c
}

// printJobNote prints, for the table, a Job change that deletes nothing as
// one plain line.
func (o *Options) printJobNote(w io.Writer, pred *prediction.Prediction) bool {
	if pred.Job == nil || !pred.Job.NoChange || o.printer != nil || *o.PrintFlags.OutputFormat == "name" {
		return false
	}
	fmt.Fprintln(w, pred.Message)
	return true
}

// jobModeCode: a completion mode that does not allow the change is a
// request the API server would refuse.
func jobModeCode(err error) (int, bool) {
	var me *job.ModeError
	if errors.As(err, &me) {
		return ExitUsage, true
	}
	return 0, false
}
