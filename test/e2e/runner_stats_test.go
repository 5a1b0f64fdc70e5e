package e2e

// Statistics: agreement counts over the whole run.

import (
	"fmt"
	"strings"
	"sync"
)

type agreementStats struct {
	mu            sync.Mutex
	scenarios     int
	certainPods   int
	disagreements int
	failed        []string
	pluginErrors  []string

	// Deployments (checkRollout): ReplicaSet sizes, victims' steps, creates.
	deployments int
	steps       stepReport
	stepFailed  []string
}

func (s *agreementStats) addSteps(name string, r *stepReport) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deployments++
	t := &s.steps
	t.splitChecked += r.splitChecked
	t.splitBad += r.splitBad
	t.finalChecked += r.finalChecked
	t.finalBad += r.finalBad
	t.stepChecked += r.stepChecked
	t.stepBad += r.stepBad
	t.stepUnverifiable += r.stepUnverifiable
	t.createsChecked += r.createsChecked
	t.createsBad += r.createsBad
	if r.splitBad+r.finalBad+r.stepBad+r.createsBad > 0 {
		s.stepFailed = append(s.stepFailed, name)
	}
}

func (s *agreementStats) pluginError(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pluginErrors = append(s.pluginErrors, name)
}

func (s *agreementStats) add(name string, checked, disagree int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scenarios++
	s.certainPods += checked
	s.disagreements += disagree
	if disagree > 0 {
		s.failed = append(s.failed, name)
	}
}

func (s *agreementStats) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	line := fmt.Sprintf("e2e agreement: %d scenarios, %d certain pods checked, %d disagreements", s.scenarios, s.certainPods, s.disagreements)
	if len(s.failed) > 0 {
		line += " (in: " + strings.Join(s.failed, ", ") + ")"
	}
	if len(s.pluginErrors) > 0 {
		line += fmt.Sprintf("; the plugin FAILED on %d scenarios: %s", len(s.pluginErrors), strings.Join(s.pluginErrors, ", "))
	}
	if s.deployments > 0 {
		t := s.steps
		line += fmt.Sprintf("\ne2e deployment steps: %d Deployments; afterScale %d checked, %d wrong; final %d checked, %d wrong; "+
			"victim steps %d checked, %d wrong, %d unverifiable (merged ReplicaSet syncs, or an open choice); creates %d checked, %d wrong",
			s.deployments, t.splitChecked, t.splitBad, t.finalChecked, t.finalBad, t.stepChecked, t.stepBad, t.stepUnverifiable,
			t.createsChecked, t.createsBad)
		if len(s.stepFailed) > 0 {
			line += " (in: " + strings.Join(s.stepFailed, ", ") + ")"
		}
	}
	return line
}
