package rules

// Gates the Job controller's scale-in reads.
const (
	// ElasticIndexedJob lets an Indexed Job's completions change, together
	// with parallelism (the API server's validation reads it).
	ElasticIndexedJob = "ElasticIndexedJob"
	// JobTrackingWithFinalizers counts finished pods through a finalizer
	// and the Job's status rather than by listing them (1.22-1.25 only
	// for Jobs created with it on; every Job from 1.26).
	JobTrackingWithFinalizers = "JobTrackingWithFinalizers"
)

// KindJob is the Job controller.
const KindJob = "Job"

// JobMaxDeletesPerSync is job.MaxPodCreateDeletePerSync (1.22+; unexported in 1.22).
const JobMaxDeletesPerSync = 500

// JobRules are the Job controller's scale-in switches (manageJob and
// activePodsForRemoval in pkg/controller/job). Its comparator is
// controller.ActivePods: the rules of RuleSet's comparator without
// deletion cost, ranks or log2 buckets, in every version; only its restart
// rule follows RuleSet.SidecarRestarts.
type JobRules struct {
	// WantRemaining: the pods wanted are min(parallelism, completions -
	// succeeded), and a Job without completions that saw a success keeps
	// what runs; 1.21 removes only what exceeds parallelism.
	WantRemaining bool
	// OutOfRange: an Indexed Job's pods with an index >= completions are
	// removed first with those without an index and the duplicates.
	OutOfRange bool
	// DeleteCap: at most JobMaxDeletesPerSync deletions per sync.
	DeleteCap bool
	// ElasticIndexed: an Indexed Job's completions may change with
	// parallelism (set to the same value).
	ElasticIndexed bool
	// TrackingFinalizers: the Job gate is on (1.22-1.25; a Job is
	// tracked so only if created with it, see the job-tracking annotation).
	TrackingFinalizers bool
	// TrackingAll: every Job is tracked with finalizers (1.26+).
	TrackingAll bool
}

var jobSwitches = []Switch{
	{Field: "Job.WantRemaining", Kind: KindJob, Since: 22,
		What: "pods wanted = min(parallelism, completions - succeeded); without completions, none removed after a success", ref: func(r *RuleSet) *bool { return &r.Job.WantRemaining }},
	{Field: "Job.OutOfRange", Kind: KindJob, Since: 22,
		What: "Indexed: pods with an index >= completions are removed first", ref: func(r *RuleSet) *bool { return &r.Job.OutOfRange }},
	{Field: "Job.DeleteCap", Kind: KindJob, Since: 22,
		What: "at most 500 pod deletions per sync", ref: func(r *RuleSet) *bool { return &r.Job.DeleteCap }},
	{Field: "Job.ElasticIndexed", Kind: KindJob, Since: 27, Gate: ElasticIndexedJob,
		What: "Indexed: completions may change together with parallelism", ref: func(r *RuleSet) *bool { return &r.Job.ElasticIndexed }},
	{Field: "Job.TrackingFinalizers", Kind: KindJob, Since: 22, Gate: JobTrackingWithFinalizers,
		What: "Jobs created with the job-tracking annotation count finished pods by finalizer and status", ref: func(r *RuleSet) *bool { return &r.Job.TrackingFinalizers }},
	{Field: "Job.TrackingAll", Kind: KindJob, Since: 26,
		What: "every Job counts finished pods by finalizer and status", ref: func(r *RuleSet) *bool { return &r.Job.TrackingAll }},
}
