package admission

import (
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/budgets"
	"github.com/capstan-dev/capstan/pkg/disruption"
)

// ValidationSucceeded reasons, one per check.
const (
	ReasonInvalidBudgetSchedule         = "InvalidBudgetSchedule"
	ReasonInvalidBudgetTimeZone         = "InvalidBudgetTimeZone"
	ReasonInvalidRebalance              = "InvalidRebalance"
	ReasonInvalidReturnToPreferred      = "InvalidReturnToPreferred"
	ReasonInvalidConsolidationThreshold = "InvalidConsolidationThreshold"
	ReasonInvalidRepairBudget           = "InvalidRepairBudget"
)

// problem is one failed NodePool check: its condition reason, the field
// error, and the wording the condition's message gives it.
type problem struct {
	reason string
	err    *field.Error
	text   string
}

var annotations = field.NewPath("metadata", "annotations")

// annotationProblem is an annotation whose value Capstan does not know:
// the one err names (a *disruption.AnnotationError), else key.
func annotationProblem(reason, key string, err error) problem {
	var e *disruption.AnnotationError
	if !errors.As(err, &e) {
		e = &disruption.AnnotationError{Key: key, Problem: err.Error()}
	}
	return problem{reason: reason, err: field.Invalid(annotations.Key(e.Key), field.OmitValueType{}, e.Problem), text: e.Error()}
}

// nodePoolProblems checks what the CRD cannot: that the
// capstan.dev/budget-timezone annotation names an IANA time zone, that
// the return-to-preferred, consolidation-threshold, rebalance and repair
// annotations hold values Capstan knows, and that every budget schedule is a cron expression the
// disruption controller can evaluate; in that order.
func nodePoolProblems(np *v1.NodePool) []problem {
	var out []problem
	if tz, ok := np.Annotations[v1.BudgetTimeZoneAnnotationKey]; ok {
		if err := budgets.ValidateTimeZone(tz); err != nil {
			out = append(out, annotationProblem(ReasonInvalidBudgetTimeZone, v1.BudgetTimeZoneAnnotationKey, err))
		}
	}
	if _, err := disruption.ReturnPolicyOf(np); err != nil {
		out = append(out, annotationProblem(ReasonInvalidReturnToPreferred, v1.ReturnToPreferredAnnotationKey, err))
	}
	if _, err := disruption.ConsolidationThresholdOf(np); err != nil {
		out = append(out, annotationProblem(ReasonInvalidConsolidationThreshold, v1.ConsolidationThresholdAnnotationKey, err))
	}
	if v, ok := np.Annotations[v1.RebalanceAnnotationKey]; ok && v != v1.RebalanceReplace && v != v1.RebalanceEvent {
		out = append(out, annotationProblem(ReasonInvalidRebalance, v1.RebalanceAnnotationKey,
			fmt.Errorf("%q is not %q or %q", v, v1.RebalanceReplace, v1.RebalanceEvent)))
	}
	if _, err := disruption.RepairLimitsOf(np); err != nil {
		out = append(out, annotationProblem(ReasonInvalidRepairBudget, v1.RepairBudgetAnnotationKey, err))
	}
	budgetsPath := field.NewPath("spec", "disruption", "budgets")
	for i, b := range np.Spec.Disruption.Budgets {
		if b.Schedule == nil {
			continue
		}
		if err := budgets.ValidateSchedule(*b.Schedule); err != nil {
			path := budgetsPath.Index(i).Child("schedule")
			out = append(out, problem{reason: ReasonInvalidBudgetSchedule, err: field.Invalid(path, *b.Schedule, err.Error()),
				text: fmt.Sprintf("%s %q: %v", path, *b.Schedule, err)})
		}
	}
	return out
}

// NodePool is what is wrong with np that its CRD cannot say (see
// ValidationSucceeded), by field path. Such a NodePool is kept, not
// refused, as the API server keeps it.
func NodePool(np *v1.NodePool) field.ErrorList {
	var errs field.ErrorList
	for _, p := range nodePoolProblems(np) {
		errs = append(errs, p.err)
	}
	return errs
}

// NodePoolReady is a NodePool's Ready condition, which the controller
// sets and the static pool step waits for, and simulate works out the
// same way: True when every dependency is True; otherwise False if any is
// False, else Unknown, with the reason of the first such dependency and
// its type and message as the message.
func NodePoolReady(deps ...metav1.Condition) metav1.Condition {
	for _, want := range []metav1.ConditionStatus{metav1.ConditionFalse, metav1.ConditionUnknown} {
		for _, d := range deps {
			if d.Status == want {
				return metav1.Condition{
					Type:    v1.ConditionTypeReady,
					Status:  want,
					Reason:  d.Reason,
					Message: strings.TrimSuffix(d.Type+": "+d.Message, ": "),
				}
			}
		}
	}
	return metav1.Condition{Type: v1.ConditionTypeReady, Status: metav1.ConditionTrue, Reason: v1.ConditionTypeReady}
}

// ValidationSucceeded is the NodePool's ValidationSucceeded condition:
// False when NodePool finds a problem, with every problem in the message
// and the reason of the first (time zone, return-to-preferred,
// consolidation threshold, rebalance, repair, then schedules). Its timestamps and generation are the
// caller's to set.
func ValidationSucceeded(np *v1.NodePool) metav1.Condition {
	problems := nodePoolProblems(np)
	if len(problems) == 0 {
		return metav1.Condition{Type: v1.ConditionTypeValidationSucceeded, Status: metav1.ConditionTrue, Reason: v1.ConditionTypeValidationSucceeded}
	}
	texts := make([]string, len(problems))
	for i, p := range problems {
		texts[i] = p.text
	}
	return metav1.Condition{
		Type:    v1.ConditionTypeValidationSucceeded,
		Status:  metav1.ConditionFalse,
		Reason:  problems[0].reason,
		Message: strings.Join(texts, "; "),
	}
}
