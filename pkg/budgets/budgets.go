package budgets

import (
	"fmt"
	"strings"
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
	if err := ValidateTimeZone(name); err != nil {
		return nil, fmt.Errorf("nodepool %s: annotation %s: %w", np.Name, v1.BudgetTimeZoneAnnotationKey, err)
	}
	return time.LoadLocation(name)
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
			// A schedule that parses but never fires is evaluated (never
			// in force); ValidateSchedule flags it.
			sched, err := parseSchedule(*b.Schedule)
			if err != nil {
				return nil, nil, fmt.Errorf("nodepool %s: budgets[%d].schedule %q: %w", np.Name, i, *b.Schedule, err)
			}
			s.Active, s.Change = window(sched, b.Duration.Duration, now.In(loc))
		}
		out = append(out, s)
	}
	return out, loc, nil
}

// window says whether a window of length d opened by sched covers now,
// and when that next changes. Windows are [fire, fire+d); overlapping
// ones chain. A schedule that does not fire (Next's zero time: nothing
// within five years) opens no window.
func window(sched cron.Schedule, d time.Duration, now time.Time) (bool, time.Time) {
	open := sched.Next(now.Add(-d))
	if open.IsZero() {
		return false, time.Time{}
	}
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

// ValidateTimeZone accepts an IANA zone name; empty means the default,
// UTC. "Local" is refused: it would depend on the controller's machine.
func ValidateTimeZone(tz string) error {
	if tz == "Local" {
		return fmt.Errorf("%q is not an IANA time zone name such as Europe/Berlin", tz)
	}
	if _, err := time.LoadLocation(tz); err != nil {
		return fmt.Errorf("%q is not an IANA time zone name such as Europe/Berlin, %w", tz, err)
	}
	return nil
}

// ValidateSchedule accepts what the CRD pattern does, parsed as the
// standard five-field cron or a descriptor (@daily, @hourly …). A TZ= or
// CRON_TZ= prefix is refused, since the zone comes from the annotation
// (decision 14), and so is @every, which has no window start, and a
// schedule that never fires (such as 0 0 30 2 *: no date matches it),
// whose budget would never be in force.
func ValidateSchedule(s string) error {
	sched, err := parseSchedule(s)
	if err != nil {
		return err
	}
	if sched.Next(fireCheckFrom).IsZero() {
		return fmt.Errorf("never fires: no date matches its day-of-month and month (or day-of-week) fields")
	}
	return nil
}

// fireCheckFrom is where ValidateSchedule looks for a schedule's first
// firing. cron's Next searches five years; a schedule that fires at all
// does within the four years from the start of a leap year (29 February
// included), so the answer is the same whenever it is asked.
var fireCheckFrom = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// parseSchedule parses a schedule ValidateSchedule's syntax rules allow.
func parseSchedule(s string) (cron.Schedule, error) {
	if strings.HasPrefix(s, "TZ=") || strings.HasPrefix(s, "CRON_TZ=") {
		return nil, fmt.Errorf("a time zone prefix is not allowed; set the %s annotation instead", v1.BudgetTimeZoneAnnotationKey)
	}
	if strings.HasPrefix(s, "@every") {
		return nil, fmt.Errorf("@every is not allowed; use a cron expression or @yearly, @monthly, @weekly, @daily, @hourly")
	}
	sched, err := cron.ParseStandard(s)
	if err != nil {
		return nil, fmt.Errorf("not a cron expression, %w", err)
	}
	return sched, nil
}
