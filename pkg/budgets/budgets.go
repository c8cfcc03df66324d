package budgets

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// Status is one budget at one moment.
type Status struct {
	Nodes    string   `json:"nodes"`
	Reasons  []string `json:"reasons,omitempty"`
	Schedule string   `json:"schedule,omitempty"`
	Duration string   `json:"duration,omitempty"`
	// Active: the budget is in force now. A budget without a schedule
	// always is.
	Active bool `json:"active"`
	// Change is when Active next flips: the window's close when active,
	// its next opening otherwise; zero when it never does.
	Change time.Time `json:"change,omitzero"`
}

// maxWindows bounds how many overlapping windows are chained to find
// where an open window closes; beyond it (say @hourly with a 2h duration)
// the budget is in force for good.
const maxWindows = 1000

// Location is the budgets' time zone: the NodePool's
// capstan.dev/budget-timezone, UTC when unset.
func Location(np *v1.NodePool) (*time.Location, error) {
	name := np.Annotations[v1.BudgetTimeZoneAnnotationKey]
	if name == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("nodepool %s: %s %q, %w", np.Name, v1.BudgetTimeZoneAnnotationKey, name, err)
	}
	return loc, nil
}

// Evaluate returns every budget of the NodePool at now, with times in
// its time zone.
func Evaluate(np *v1.NodePool, now time.Time) ([]Status, *time.Location, error) {
	loc, err := Location(np)
	if err != nil {
		return nil, nil, err
	}
	out := make([]Status, 0, len(np.Spec.Disruption.Budgets))
	for i, b := range np.Spec.Disruption.Budgets {
		s := Status{Nodes: b.Nodes, Active: true}
		for _, r := range b.Reasons {
			s.Reasons = append(s.Reasons, string(r))
		}
		if b.Schedule != nil && b.Duration != nil {
			s.Schedule, s.Duration = *b.Schedule, b.Duration.Duration.String()
			sched, err := cron.ParseStandard(*b.Schedule)
			if err != nil {
				return nil, nil, fmt.Errorf("nodepool %s: budgets[%d].schedule %q, %w", np.Name, i, *b.Schedule, err)
			}
			s.Active, s.Change = window(sched, b.Duration.Duration, now.In(loc))
		}
		out = append(out, s)
	}
	return out, loc, nil
}

// window says whether a window of length d opened by sched covers now,
// and when that next changes. Windows are [fire, fire+d); overlapping
// ones chain.
func window(sched cron.Schedule, d time.Duration, now time.Time) (bool, time.Time) {
	open := sched.Next(now.Add(-d))
	if open.After(now) {
		return false, open
	}
	end := open.Add(d)
	for range maxWindows {
		next := sched.Next(open)
		if next.After(end) || next.IsZero() {
			return true, end
		}
		open, end = next, next.Add(d)
	}
	return true, time.Time{}
}
