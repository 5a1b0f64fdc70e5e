package complete

// job checks a Job's status.active, the active pods it counted at its last
// sync, against the pods found: a Job read without its pods would otherwise
// look like one with nothing to delete.
func (c *checker) job() error {
	j := find(c.s.Jobs, c.ref)
	if j == nil || (j.Status.StartTime == nil && j.Status.Active == 0) {
		return nil // never synced (or written by hand): nothing to compare
	}
	if j.Spec.Suspend != nil && *j.Spec.Suspend {
		return nil // its pods are going anyway
	}
	active, terminating := c.ownedPods(j.UID, "Job", j.Name)
	return c.compare("Job", j.Name, j.Status.Active, active, terminating, "jobs,pods")
}
